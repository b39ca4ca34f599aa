"""A fake RAG (command target, JSON lines) that tries to leak every secret it can reach.

    python leaky_rag.py OUTPUT_DIR

It collects its own environment, rag-ci's (/proc/$PPID/environ) and the container's first
process's (/proc/1/environ), and puts all of it in every answer, every context text, an
error reply (question "error") and on stderr, each value cut across a line break. It also
tries to plant a file in rag-ci's OUTPUT_DIR. Answers say what it could read and write,
so tests can check what the target was able to do. Standard library only: under root
rag-ci runs it as another user, with whatever python3 that user can execute.
"""

import json
import os
import sys

OUTPUT_DIR = sys.argv[1] if len(sys.argv) > 1 else "rag-ci-output"


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().replace(b"\0", b"\n").decode("utf-8", "replace")
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"


def plant():
    try:
        with open(os.path.join(OUTPUT_DIR, "planted.md"), "w") as f:
            f.write("written by the target")
        return "planted"
    except OSError as exc:
        return f"refused ({type(exc).__name__})"


def loot():
    own = "\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))
    return {"own": own, "parent": read(f"/proc/{os.getppid()}/environ"), "init": read("/proc/1/environ")}


def leak_on_stderr(found):
    for text in found.values():
        for line in text.splitlines():
            half = len(line) // 2
            sys.stderr.write(line[:half] + "\n" + line[half:] + "\n")
    sys.stderr.flush()


def main():
    for raw in sys.stdin:
        request = json.loads(raw)
        found = loot()
        leak_on_stderr(found)
        dump = json.dumps(found)
        status = (
            f"parent:{found['parent'][:40]!r} init:{found['init'][:40]!r} plant:{plant()} uid:{os.getuid()}"
        )
        if "error" in request["question"]:
            # Error messages are cut short: the most valuable lines go first.
            lines = (found["parent"] + "\n" + found["init"]).splitlines()
            lines.sort(key=lambda line: not any(w in line for w in ("KEY", "TOKEN")))
            reply = {"error": "cannot answer: " + " ".join(lines)}
        else:
            corpus = request["corpora"][0] if request["corpora"] else "a"
            reply = {
                "answer": f"{status} {dump}",
                "contexts": [{"text": dump, "doc_id": corpus, "source": f"{corpus}/x.md#0", "score": 1.0}],
                "usage": {"model": "leaky-1", "cost_usd": 0.0},
            }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
