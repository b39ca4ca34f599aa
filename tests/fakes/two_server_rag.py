"""A fake RAG app like txtai's stock API: `python two_server_rag.py ANSWER_PORT SEARCH_PORT PIDFILE`.

The started process serves POST /answer (the answer only, no chunks) and launches a second
process serving POST /search (the chunks of the named collections), which binds its port a
second later: readiness must be polled for both URLs. The two share one "database cursor" (a
file lock): a search that arrives while an answer holds it fails with HTTP 500 and a traceback,
as the real app did when both calls went out at once (`order: after` avoids it). Every request
is access-logged on stderr, as a web server does, so a traceback scrolls away under them.
The search process's pid is written to PIDFILE: it must not outlive the run.
"""

import fcntl
import os
import subprocess
import sys
import time
import traceback

from http_rag import DOCS, JsonHandler, serve

CURSOR = os.path.join(
    os.path.dirname(os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else ".")), "cursor.lock"
)


class Handler(JsonHandler):
    def log_message(self, format, *args):  # an access log, as every web server writes one
        sys.stderr.write(f'127.0.0.1 - - "{self.command} {self.path}" {args[1] if len(args) > 1 else ""}\n')

    def do_POST(self):
        body = self.read_json()
        with open(CURSOR, "a") as cursor:
            try:
                fcntl.flock(cursor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    raise RuntimeError("cursor already in use by another request")
                except RuntimeError:
                    traceback.print_exc()
                self.send_json(500, {"detail": "Internal Server Error"})
                return
            try:
                time.sleep(0.05)  # the query runs on the shared cursor
                reply = self.reply(body)
            finally:
                fcntl.flock(cursor, fcntl.LOCK_UN)
        self.send_json(200, reply)

    def reply(self, body):
        if self.path == "/answer":
            return {"answer": " ".join(text for _, text in DOCS.values())}
        return {
            "hits": [
                {"text": DOCS[c][1], "collection": c, "path": DOCS[c][0]}
                for c in body["collections"]
                if c in DOCS
            ]
        }


if __name__ == "__main__":
    if sys.argv[1] == "--search":
        time.sleep(1.0)  # a second server that starts later than the first
        sys.argv = [sys.argv[0], sys.argv[2]]
        serve(Handler)
    else:
        answer_port, search_port, pidfile = sys.argv[1:4]
        child = subprocess.Popen([sys.executable, __file__, "--search", search_port, pidfile])
        with open(pidfile, "w") as out:
            out.write(str(child.pid))
        sys.argv = [sys.argv[0], answer_port]
        serve(Handler)
