"""A fake `kind: command` RAG that breaks the JSON-lines protocol on purpose.

Misbehaviour is chosen per question id: UNRULY_RAG="Q1=stray,Q6=empty". Modes:
  stray     a log line on stdout ("DEBUG: loaded model") before the reply
  twice     the reply written twice, in one write
  late      the reply, then 0.3 s later the same reply again (then creates the file
            UNRULY_RAG_LATE_WRITTEN names, when set)
  two_lines the reply written twice, in two writes (print, print)
  no_id     the reply without its `id`, even with UNRULY_RAG_IDS=1
  other_id  first a reply carrying another question's id, then the real one
  empty     a well-formed reply without contexts (a real regression)
  deep      a reply holding a list nested 200,000 deep
  number_id the reply with its id echoed as a JSON number ("7" -> 7)
Every answer names the id it answers, so a reply read for the wrong question shows.
UNRULY_RAG_IDS=1 puts the request's `id` in every reply. UNRULY_RAG_BANNER=1 prints a
reply-shaped line ({"answer": "banner"}, no id) at every start, before reading a request;
UNRULY_RAG_BANNER=restarts=PATH only at the starts after the first (PATH marks the first).
UNRULY_RAG_CRASH=Q2 exits (code 3) when asked Q2, to make the process restart.
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
    if os.environ.get("UNRULY_RAG_IDS") and mode != "no_id":
        body = {"id": request_id, **body}
    if mode == "number_id":
        body = {**body, "id": int(request_id)}
    return json.dumps(body) + "\n"


def main():
    modes = dict(pair.split("=", 1) for pair in os.environ.get("UNRULY_RAG", "").split(",") if pair)
    banner = os.environ.get("UNRULY_RAG_BANNER", "")
    if banner.startswith("restarts="):
        mark = banner.split("=", 1)[1]
        banner = "1" if os.path.exists(mark) else ""
        open(mark, "a").close()
    if banner:
        print(json.dumps({"answer": "banner", "contexts": [FACT]}), flush=True)
    for line in sys.stdin:
        request_id = json.loads(line)["id"]
        if request_id in os.environ.get("UNRULY_RAG_CRASH", "").split(","):
            sys.exit(3)
        mode = modes.get(request_id, "")
        good = reply(request_id, mode)
        if mode == "stray":
            sys.stdout.write("DEBUG: loaded model\n")
        elif mode == "other_id":
            sys.stdout.write(json.dumps({"id": "Q0", "answer": "stale [Q0]", "contexts": [FACT]}) + "\n")
        if mode == "deep":
            good = good[:-2] + ', "extra": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
        if mode == "two_lines":
            print(good, end="", flush=True)
            print(good, end="", flush=True)
            continue
        sys.stdout.write(good + good if mode == "twice" else good)
        sys.stdout.flush()
        if mode == "late":
            time.sleep(0.3)
            sys.stdout.write(good)
            sys.stdout.flush()
            if os.environ.get("UNRULY_RAG_LATE_WRITTEN"):  # tells the test the duplicate is out
                open(os.environ["UNRULY_RAG_LATE_WRITTEN"], "a").close()


if __name__ == "__main__":
    main()
