"""A seeded stochastic RAG (a simulator, in memory): generator noise, reproducible.

Every request garbles its answer with probability `garble_rate`, drawn from a random
stream seeded by (run seed, question id, how many times this question was asked in this
run): independent per request, identical for the same seed whatever order concurrent
requests arrive in. `broken` question ids get the wrong passages (a real regression:
they fail every time). Used by tests/integration/test_generator_noise.py and by the
benchmark's re-ask figure (benchmarks/noise.py); injected with `run_project(target=...)`.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from rag_ci.targets.base import WARMUP_ID_PREFIX

CORPORA = ("engine", "gearbox", "brakes", "chassis")


def fact(i: int) -> tuple[str, str, str]:
    """Question i's corpus, the sentence holding its answer, and the answer's keyword."""
    corpus = CORPORA[i % len(CORPORA)]
    value = f"{10 + (i * 37) % 900} Nm"
    return corpus, f"The torque limit of part P{i} in the {corpus} is {value}.", value


def write_flaky_project(folder: Path, *, questions: int = 100, extra_yaml: str = "") -> Path:
    """rag-ci.yml + questions.yml for the fake: judge-free metrics only (fast, no judge noise)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["version: 1", "questions:"]
    for i in range(questions):
        corpus, sentence, value = fact(i)
        lines.append(
            f"  - {{id: P{i:03d}, question: 'What is the torque limit of part P{i}?', reference: '{sentence}', "
            f"doc_id: {corpus}, sources: ['{corpus}/p{i}.md'], keywords: ['{value}'], tags: [t{i % 3}]}}"
        )
    (folder / "questions.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpora = "".join(f"  {c}: {{description: {c}}}\n" for c in CORPORA)
    config = folder / "rag-ci.yml"
    config.write_text(
        "questions: questions.yml\n"
        f"corpora:\n{corpora}"
        "target: {kind: python, entry: 'benchmarks.flaky_rag:not_used', concurrency: 8}\n"
        "metrics:\n  hit_at_k: {k: 5}\n  keyword_coverage: {threshold: 0.6}\n" + extra_yaml,
        encoding="utf-8",
    )
    return config


class FlakyRag:
    """An in-memory Target: right passages, and an answer garbled at random `garble_rate` of the time."""

    max_parallel: int | None = None

    def __init__(
        self,
        seed: int,
        *,
        garble_rate: float = 0.15,
        broken: frozenset[str] | set[str] = frozenset(),
        cost_usd: float = 0.0001,
        latency_s: float = 0.0,
    ):
        self.seed = seed
        self.garble_rate = garble_rate
        self.broken = frozenset(broken)
        self.cost_usd = cost_usd
        self.latency_s = latency_s
        self.asked: Counter[str] = Counter()

    @property
    def calls(self) -> int:
        return sum(self.asked.values())

    async def start(self) -> None:
        pass

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.latency_s:
            import asyncio

            await asyncio.sleep(self.latency_s)
        qid = request["id"]
        if qid.startswith(WARMUP_ID_PREFIX):  # an unscored warm-up: not one of the questions' draws
            return {"answer": "warm", "contexts": []}
        draw = random.Random(f"{self.seed}:{qid}:{self.asked[qid]}").random()
        self.asked[qid] += 1
        i = int(qid[1:])
        corpus, sentence, _ = fact(i)
        if qid in self.broken:  # the wrong passages: a neighbour's, so the answer is wrong too
            corpus, sentence, _ = fact(i + len(CORPORA))
            corpus = request["corpora"][0]
        source = f"{corpus}/p{i if qid not in self.broken else i + len(CORPORA)}.md#0"
        answer = "I am not sure, it depends on the model year." if draw < self.garble_rate else sentence
        return {
            "answer": answer,
            "contexts": [{"text": sentence, "doc_id": corpus, "source": source, "score": 0.9}],
            "usage": {"model": "flaky-1", "cost_usd": self.cost_usd},
        }

    async def stop(self) -> None:
        pass

    def diagnostics(self) -> str:
        return ""
