"""A fake HTTP RAG whose backend goes down: `python outage_rag.py PORT [HOST]` (127.0.0.1 by default).

Like an app whose LLM API is unreachable (PrivateGPT with its model server down): the
server is up and healthy, but questions hang or fail. OUTAGE_RAG chooses how:
  ok         answers every question (from tiny_rag's two documents)
  hang       every POST hangs (until the client gives up)
  error      every POST is HTTP 500 at once
  after=N    answers the first N POSTs, then hangs
OUTAGE_RAG_LOG=path appends the id of every POST received (to count asks and re-asks).
"""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DOCS = {"a": ("a/x.md", "The delay is 10 ms on CAN."), "b": ("b/y.md", "The delay is 20 ms on LIN.")}
_count = 0
_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self.reply(200, {"status": "ok"})

    def do_POST(self):  # noqa: N802
        global _count
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with _lock:
            _count += 1
            number = _count
            if os.environ.get("OUTAGE_RAG_LOG"):
                with open(os.environ["OUTAGE_RAG_LOG"], "a") as log:
                    log.write(request["id"] + "\n")
        mode = os.environ.get("OUTAGE_RAG", "ok")
        if mode == "hang" or (mode.startswith("after=") and number > int(mode[6:])):
            time.sleep(3600)
        if mode == "error":
            self.reply(500, {"detail": "LLM API unreachable: connection refused (http://llm:8080/v1)"})
            return
        contexts = [{"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0] + "#0", "score": 1.0}
                    for c in request["corpora"] if c in DOCS]
        self.reply(200, {"answer": " ".join(c["text"] for c in contexts) or "It depends.", "contexts": contexts})


def main():
    server = ThreadingHTTPServer((sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print("outage rag listening", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
