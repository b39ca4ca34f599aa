"""A fake, in-memory RAG for tests: two one-document corpora and scripted misbehaviour.

Behaviour is chosen per question text so one target can exercise every failure:
  "crash"   -> the process exits (command) / raises (python)
  "sleep"   -> never answers in time
  "garbage" -> a line that is not JSON
  "leak"    -> returns a context from a corpus it was not routed to
  "ceo"     -> refuses
Run as a script it speaks the JSON-lines protocol; `answer` is the python entry.
Set TINY_RAG_BROKEN=1 to make it answer the b corpus wrongly (a regression),
TINY_RAG_DELAY=seconds to slow every answer, TINY_RAG_LOG=path to record asked ids,
TINY_RAG_PAD=n to add n spaces to every answer (a long reply line),
TINY_RAG_STALL_AFTER=n to answer n requests, then never again (a run caught mid-way, whatever
the machine's speed).
"""

import json
import os
import sys
import time

DOCS = {"a": ("a/x.md", "The delay is 10 ms on CAN."), "b": ("b/y.md", "The delay is 20 ms on LIN.")}
_answered = 0  # requests answered by this process (TINY_RAG_STALL_AFTER)


def answer(request):
    global _answered
    if _answered >= int(os.environ.get("TINY_RAG_STALL_AFTER", sys.maxsize)):
        time.sleep(3600)
    _answered += 1
    if os.environ.get("TINY_RAG_LOG"):  # lets tests count which questions were asked
        with open(os.environ["TINY_RAG_LOG"], "a") as log:
            log.write(request["id"] + "\n")
    time.sleep(float(os.environ.get("TINY_RAG_DELAY", "0")))
    question = request["question"].lower()
    corpora = request["corpora"]
    if "crash" in question:
        raise RuntimeError("boom")
    if "sleep" in question:
        time.sleep(30)
    contexts = [
        {"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0] + "#0", "score": 1.0}
        for c in corpora
        if c in DOCS
    ]
    if "leak" in question:
        contexts.append({"text": "other", "doc_id": "zzz", "source": "zzz/q.md", "score": 0.1})
    if "ceo" in question:
        return {"answer": "I could not find this in the documents.", "contexts": contexts}
    if os.environ.get("TINY_RAG_BROKEN") and corpora == ["b"]:
        contexts = []
    text = " ".join(c["text"] for c in contexts) or "It depends."
    text += " " * int(os.environ.get("TINY_RAG_PAD", "0"))
    return {
        "answer": text,
        "contexts": contexts,
        "usage": {
            "model": "tiny-1",
            "input_tokens": 5,
            "output_tokens": len(text.split()),
            "cost_usd": 0.001,
        },
    }


def main():
    print("tiny rag ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        question = request["question"].lower()
        if "crash" in question:
            print("crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        if "garbage" in question:
            print("this is not json", flush=True)
            continue
        print(json.dumps(answer(request)), flush=True)


if __name__ == "__main__":
    main()
