"""What the fake HTTP RAGs share (outage_rag, cold_rag, own_api_rag): a JSON handler that
answers GET (health) with 200, and serving it on a port. Standard library only: the fakes
run as scripts, on the host and inside containers (copy this file beside them)."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DOCS = {"a": ("a/x.md", "The delay is 10 ms on CAN."), "b": ("b/y.md", "The delay is 20 ms on LIN.")}


class JsonHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self):
        self.send_json(200, {"status": "ok"})


def contexts_for(corpora):
    """tiny_rag's one chunk per routed corpus, in the contract's shape."""
    return [
        {"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0] + "#0", "score": 1.0}
        for c in corpora
        if c in DOCS
    ]


def serve(handler):
    """`script.py PORT [HOST]`: serve `handler` until killed (HOST defaults to 127.0.0.1)."""
    server = ThreadingHTTPServer(
        (sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", int(sys.argv[1])), handler
    )
    server.daemon_threads = True
    print(f"{sys.argv[0]} listening on {server.server_address}", file=sys.stderr, flush=True)
    server.serve_forever()
