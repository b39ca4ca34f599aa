"""A fake RAG app with an API of its own shape: `python own_api_rag.py PORT`.

Like an existing FastAPI app that knows nothing of rag-ci: POST /v1/ask takes
`{"ref": ..., "query": ..., "collections": [...]}` and answers
`{"result": {"text": ..., "sources": [{"content", "metadata": {"collection", "file"}, "relevance"}]},
  "meta": {"model": ..., "tokens": {"in": ..., "out": ...}}}`.
A body of rag-ci's own shape is refused with 422, as FastAPI's validation would.
OWN_API_LEAK=1 adds a chunk indexed from the collection "other" to every answer (a
routing leak, visible only through the chunk's own metadata).
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNKS = {"a": ("a/x.md", "The delay is 10 ms on CAN."), "b": ("b/y.md", "The delay is 20 ms on LIN."),
          "other": ("other/secret.md", "Another customer's contract.")}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self.send(200, {"status": "up"})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/ask" or set(body) != {"ref", "query", "collections"} or not isinstance(body["collections"], list):
            self.send(422, {"detail": [{"loc": ["body"], "msg": "field required: ref, query, collections"}]})
            return
        collections = list(body["collections"]) + (["other"] if os.environ.get("OWN_API_LEAK") else [])
        sources = [{"content": CHUNKS[c][1], "metadata": {"collection": c, "file": CHUNKS[c][0]}, "relevance": 0.8}
                   for c in collections if c in CHUNKS]
        text = " ".join(s["content"] for s in sources if s["metadata"]["collection"] != "other")
        self.send(200, {"result": {"text": text, "sources": sources, "ref": body["ref"]},
                        "meta": {"model": "own-llm-1", "tokens": {"in": 40, "out": len(text.split())}}})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
