"""A fake HTTP RAG whose backend goes down: `python outage_rag.py PORT [HOST]` (127.0.0.1 by default).

Like an app whose LLM API is unreachable (PrivateGPT with its model server down): the
server is up and healthy, but questions hang or fail. OUTAGE_RAG chooses how:
  ok         answers every question (from tiny_rag's two documents)
  hang       every POST hangs (until the client gives up)
  error      every POST is HTTP 500 at once
  after=N    answers the first N POSTs, then hangs
  first=N    the first N POSTs hang (a model still loading), then answers every question
  deep       every reply holds a list nested 200,000 deep
  wide       every reply is ~8 MB: 40,000 lists nested 99 deep (within rag-ci's bound of 100)
  hang=ID    every POST whose id starts with ID hangs (`hang=rag-ci-warmup-`: a warm-up), the others are answered
OUTAGE_RAG_LOG=path appends the id of every POST received (to count asks and re-asks).
"""

import os
import threading
import time

from http_rag import JsonHandler, contexts_for, serve

_count = 0
_lock = threading.Lock()


class Handler(JsonHandler):
    def do_POST(self):
        global _count
        request = self.read_json()
        with _lock:
            _count += 1
            number = _count
            if os.environ.get("OUTAGE_RAG_LOG"):
                with open(os.environ["OUTAGE_RAG_LOG"], "a") as log:
                    log.write(request["id"] + "\n")
        mode = os.environ.get("OUTAGE_RAG", "ok")
        if (
            mode == "hang"
            or (mode.startswith("after=") and number > int(mode[6:]))
            or (mode.startswith("first=") and number <= int(mode[6:]))
            or (mode.startswith("hang=") and request["id"].startswith(mode[5:]))
        ):
            time.sleep(3600)
        if mode in ("deep", "wide"):
            extra = (
                "[" * 200_000 + "]" * 200_000
                if mode == "deep"
                else "[" + ",".join(["[" * 97 + "]" * 97] * 40_000) + "]"
            )
            data = ('{"answer": "x", "contexts": [], "extra": ' + extra + "}").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if mode == "error":
            self.send_json(500, {"detail": "LLM API unreachable: connection refused (http://llm:8080/v1)"})
            return
        contexts = contexts_for(request["corpora"])
        self.send_json(
            200, {"answer": " ".join(c["text"] for c in contexts) or "It depends.", "contexts": contexts}
        )


if __name__ == "__main__":
    serve(Handler)
