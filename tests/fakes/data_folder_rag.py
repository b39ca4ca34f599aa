"""A fake RAG app that names documents its own way: `python data_folder_rag.py PORT`.

Like Pathway's llm-app question-answering template: its documents live under `data/<corpus>/`,
POST /v2/answer takes `{"prompt": ..., "filters": "globmatch('data/a/**', path) || ...",
"return_context_docs": true}` (a filter *expression*, not a list) and answers
`{"response": ..., "context_docs": [{"text", "metadata": {"path": "data/a/x.md"}, "dist"}]}`.
Nothing in the reply names a corpus or a source the way questions.yml does (`a`, `a/x.md`):
only config can map it. Any other body is refused with 422. DATA_RAG_LEAK=1 adds a chunk
from `data/other/` to every answer (a routing leak).
"""

import os
import re

from http_rag import DOCS, JsonHandler, serve

CHUNKS = {**DOCS, "other": ("other/secret.md", "Another customer's contract.")}
_FILTER = re.compile(r"globmatch\('data/([^/']+)/\*\*', path\)")


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_json()
        filters = body.get("filters")
        if (
            self.path != "/v2/answer"
            or set(body) != {"prompt", "filters", "return_context_docs"}
            or not isinstance(filters, str)
        ):
            self.send_json(422, {"detail": "expected {prompt, filters (a string), return_context_docs}"})
            return
        wanted = _FILTER.findall(filters)
        if " || ".join(f"globmatch('data/{c}/**', path)" for c in wanted) != filters:
            self.send_json(400, {"detail": f"cannot parse filters {filters!r}"})
            return
        corpora = wanted + (["other"] if os.environ.get("DATA_RAG_LEAK") else [])
        docs = [
            {
                "text": CHUNKS[c][1],
                "metadata": {"path": "data/" + CHUNKS[c][0], "modified_at": 1700000000},
                "dist": 0.2,
            }
            for c in corpora
            if c in CHUNKS
        ]
        text = " ".join(d["text"] for d in docs if not d["metadata"]["path"].startswith("data/other/"))
        self.send_json(200, {"response": text or "No information found.", "context_docs": docs})


if __name__ == "__main__":
    serve(Handler)
