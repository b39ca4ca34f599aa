"""A fake `kind: command` RAG that answers requests concurrently, out of order, with ids.

Each request is answered by its own thread after PIPELINED_RAG_DELAY seconds (default 0.2),
so replies come back in whatever order the threads finish. Every reply carries the
request's `id` and names it in its answer. PIPELINED_RAG_LOG=path records, per request, how
many requests were in flight in this process when it arrived (one line each): the proof
that rag-ci sent a request before the previous reply came back. PIPELINED_RAG_SLOW=Q3,Q5
answers those ids after 3 s instead.
"""

import json
import os
import sys
import threading
import time

FACT = {"text": "The delay is 10 ms on CAN.", "doc_id": "a", "source": "a/x.md#0", "score": 1.0}
lock = threading.Lock()
in_flight = 0


def answer(request, delay):
    global in_flight
    time.sleep(delay)
    line = (
        json.dumps({"id": request["id"], "answer": f"{FACT['text']} [{request['id']}]", "contexts": [FACT]})
        + "\n"
    )
    with lock:
        in_flight -= 1
        sys.stdout.write(line)
        sys.stdout.flush()


def main():
    delay = float(os.environ.get("PIPELINED_RAG_DELAY", "0.2"))
    log = os.environ.get("PIPELINED_RAG_LOG")
    global in_flight
    for line in sys.stdin:
        request = json.loads(line)
        with lock:
            in_flight += 1
            if log:
                with open(log, "a") as out:
                    out.write(f"{in_flight}\n")
        slow = request["id"] in os.environ.get("PIPELINED_RAG_SLOW", "").split(",")
        threading.Thread(target=answer, args=(request, 3.0 if slow else delay), daemon=True).start()


if __name__ == "__main__":
    main()
