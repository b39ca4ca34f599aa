"""A fake RAG app with an API of its own shape: `python own_api_rag.py PORT`.

Like an existing FastAPI app that knows nothing of rag-ci: POST /v1/ask takes
`{"ref": ..., "query": ..., "collections": [...]}` and answers
`{"result": {"text": ..., "sources": [{"content", "metadata": {"collection", "file"}, "relevance"}]},
  "meta": {"model": ..., "tokens": {"in": ..., "out": ...}}}`.
A body of rag-ci's own shape is refused with 422, as FastAPI's validation would.
OWN_API_LEAK=1 adds a chunk indexed from the collection "other" to every answer (a
routing leak, visible only through the chunk's own metadata).
"""

import os

from http_rag import DOCS, JsonHandler, serve

CHUNKS = {**DOCS, "other": ("other/secret.md", "Another customer's contract.")}


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_json()
        if (
            self.path != "/v1/ask"
            or set(body) != {"ref", "query", "collections"}
            or not isinstance(body["collections"], list)
        ):
            self.send_json(
                422, {"detail": [{"loc": ["body"], "msg": "field required: ref, query, collections"}]}
            )
            return
        collections = list(body["collections"]) + (["other"] if os.environ.get("OWN_API_LEAK") else [])
        sources = [
            {"content": CHUNKS[c][1], "metadata": {"collection": c, "file": CHUNKS[c][0]}, "relevance": 0.8}
            for c in collections
            if c in CHUNKS
        ]
        text = " ".join(s["content"] for s in sources if s["metadata"]["collection"] != "other")
        self.send_json(
            200,
            {
                "result": {"text": text, "sources": sources, "ref": body["ref"]},
                "meta": {"model": "own-llm-1", "tokens": {"in": 40, "out": len(text.split())}},
            },
        )


if __name__ == "__main__":
    serve(Handler)
