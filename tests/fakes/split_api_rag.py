"""A fake RAG app that answers and searches at two endpoints: `python split_api_rag.py PORT`.

Like many API servers over a vector store: POST /answer takes `{"question": ...}` (no
collection filter: it answers from every collection) and returns the answer with at most
one reference, no chunks; POST /search takes `{"query": ..., "filter": {"collection": [...]}}`
(or GET /search?q=...&collection=a&collection=b) and returns the chunks of the named
collections, each with its own collection in its metadata.
SPLIT_API_LEAK=1 makes the search ignore its filter for the collection "other" (a routing
leak, visible only through the search call); SPLIT_API_ECHO=1 puts the value of
SPLIT_API_TOKEN in every hit's text (a search reply quoting a credential).
"""

import os
from urllib.parse import parse_qs, urlsplit

from http_rag import DOCS, JsonHandler, serve

CHUNKS = {**DOCS, "other": ("other/secret.md", "Another customer's contract.")}


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_json()
        if self.path == "/answer" and set(body) == {"question"}:
            self.answer(body["question"])
        elif (
            self.path == "/search"
            and set(body) == {"query", "filter"}
            and isinstance(body["filter"].get("collection"), list)
        ):
            self.search(body["filter"]["collection"])
        else:
            self.send_json(422, {"detail": "unknown endpoint or body"})

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path != "/search":
            self.send_json(200, {"status": "ok"})
            return
        query = parse_qs(url.query)
        if "q" not in query or "collection" not in query:
            self.send_json(422, {"detail": "q and collection are required"})
            return
        self.search(query["collection"])

    def answer(self, question):
        text = " ".join(text for _, text in DOCS.values())  # every collection: no filter here
        self.send_json(200, {"answer": text, "reference": {"file": DOCS["a"][0]}})

    def search(self, collections):
        wanted = list(collections) + (["other"] if os.environ.get("SPLIT_API_LEAK") else [])
        echo = f" token {os.environ.get('SPLIT_API_TOKEN', '')}" if os.environ.get("SPLIT_API_ECHO") else ""
        hits = [
            {"chunk": CHUNKS[c][1] + echo, "meta": {"collection": c, "path": CHUNKS[c][0]}, "similarity": 0.9}
            for c in wanted
            if c in CHUNKS
        ]
        self.send_json(200, {"hits": hits})


if __name__ == "__main__":
    serve(Handler)
