"""A fake `kind: command` RAG that breaks the JSON-lines protocol on purpose.

Misbehaviour is chosen per question id: UNRULY_RAG="Q1=stray,Q6=empty". Modes:
  stray     a log line on stdout ("DEBUG: loaded model") before the reply
  twice     the reply written twice, in one write
  late      the reply, then 0.3 s later the same reply again
  other_id  first a reply carrying another question's id, then the real one
  empty     a well-formed reply without contexts (a real regression)
Every answer names the id it answers, so a reply read for the wrong question shows.
UNRULY_RAG_IDS=1 puts the request's `id` in every reply.
"""

import json
import os
import sys
import time

FACT = {"text": "The delay is 10 ms on CAN.", "doc_id": "a", "source": "a/x.md#0", "score": 1.0}


def reply(request_id, mode):
    contexts = [] if mode == "empty" else [FACT]
    answer = (FACT["text"] if contexts else "It depends.") + f" [{request_id}]"
    body = {"answer": answer, "contexts": contexts}
    if os.environ.get("UNRULY_RAG_IDS"):
        body = {"id": request_id, **body}
    return json.dumps(body) + "\n"


def main():
    modes = dict(pair.split("=", 1) for pair in os.environ.get("UNRULY_RAG", "").split(",") if pair)
    for line in sys.stdin:
        request_id = json.loads(line)["id"]
        mode = modes.get(request_id, "")
        good = reply(request_id, mode)
        if mode == "stray":
            sys.stdout.write("DEBUG: loaded model\n")
        elif mode == "other_id":
            sys.stdout.write(json.dumps({"id": "Q0", "answer": "stale [Q0]", "contexts": [FACT]}) + "\n")
        sys.stdout.write(good + good if mode == "twice" else good)
        sys.stdout.flush()
        if mode == "late":
            time.sleep(0.3)
            sys.stdout.write(good)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
