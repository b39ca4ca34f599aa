"""A fake HTTP RAG with a cold start and noisy latency: `python cold_rag.py PORT`.

Like a real app that loads its model on the first request: every request arriving
before the model is loaded waits for it (COLD_RAG_COLD_S seconds; drawn per run in
[1.5, 3.1] — the spread of the issue's unchanged PrivateGPT runs — when unset). Once
warm, a question takes its own typical time (0.32–0.96 s, fixed by its id) times a
per-run noise (lognormal, σ = 0.25), times COLD_RAG_SLOWDOWN (default 1: a 2 makes a
real 2× slowdown). COLD_RAG_SEED seeds the run's draws, so a test's re-runs differ from
each other but are the same every time the test runs.
"""

import hashlib
import os
import random
import threading
import time

from http_rag import JsonHandler, contexts_for, serve

SEED = int(os.environ.get("COLD_RAG_SEED", "0"))
RNG = random.Random(SEED)
COLD_S = float(os.environ.get("COLD_RAG_COLD_S") or RNG.uniform(1.5, 3.1))
SLOWDOWN = float(os.environ.get("COLD_RAG_SLOWDOWN", "1"))
_model_lock = threading.Lock()
_loaded = False


def load_model():
    global _loaded
    with _model_lock:  # concurrent first requests all wait for the one load
        if not _loaded:
            time.sleep(COLD_S)
            _loaded = True


def typical_s(request_id):
    # Long enough that what a busy machine adds to a round trip (tens of milliseconds of
    # scheduling) is a few per cent of it, not the 20 % a budget allows: the budget rule works
    # on ratios, so only the RAG's own noise decides a breach.
    digest = int(hashlib.sha256(request_id.encode()).hexdigest()[:8], 16)
    return 0.32 + 0.64 * (digest % 1000) / 1000


def noise(request_id):
    return random.Random(f"{SEED}:{request_id}").lognormvariate(0, 0.25)


class Handler(JsonHandler):
    def do_POST(self):
        request = self.read_json()
        load_model()
        time.sleep(typical_s(request["id"]) * noise(request["id"]) * SLOWDOWN)
        contexts = contexts_for(request["corpora"])
        self.send_json(200, {"answer": " ".join(c["text"] for c in contexts), "contexts": contexts})


if __name__ == "__main__":
    serve(Handler)
