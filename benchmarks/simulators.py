"""Simulated parts at the edge of a benchmark run: the RAG under test and its question set.

`SimulatedTarget` is an in-memory *simulator* of a user's RAG implementing
rag_ci.targets.base.Target: it waits `latency_s` (asyncio sleep, no CPU, like a
remote service) and answers deterministically from a synthetic corpus, so a
re-run gives byte-identical answers (the verdict cache's case). It is injected
with `run_project(target=...)`. `write_project` writes a rag-ci.yml and a
questions.yml of N synthetic questions for it; the judge simulator is
benchmarks/simulated_judge.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rag_ci.targets.base import WARMUP_ID_PREFIX

CORPORA = ("engine", "gearbox", "brakes", "chassis")
UNITS = ("ms", "bar", "Nm", "rpm", "mm")
GENERATOR_MODEL = "llama-3.1-8b-instruct"  # meta family: kept apart from the (openai) simulated judge
JUDGE_MODEL = "gpt-4.1-mini-2025-04-14"


def fact(i: int) -> tuple[str, str]:
    """Question i's corpus and the sentence holding its answer."""
    corpus = CORPORA[i % len(CORPORA)]
    value = 10 + (i * 37) % 900
    return corpus, f"The limit of component K{i} in the {corpus} is {value} {UNITS[i % len(UNITS)]}."


def questions_yaml(count: int, *, refusals: bool = False) -> str:
    """N questions, each answerable from one corpus, every 10th cross-corpus; with `refusals`,
    every 25th is out of scope (judge runs leave them out so that every question gets all six metrics)."""
    lines = ["version: 1", "questions:"]
    for i in range(count):
        corpus, sentence = fact(i)
        qid = f"SIM-{i:05d}"
        if refusals and i % 25 == 24:
            lines.append(
                f"  - {{id: {qid}, question: 'Who designed component K{i}?', expect: refusal, tags: [out_of_scope]}}"
            )
            continue
        doc_ids = [corpus] if i % 10 != 9 else [corpus, CORPORA[(i + 1) % len(CORPORA)]]
        value = sentence.split(" is ")[-1].rstrip(".")
        tags = "[numeric, cross]" if len(doc_ids) > 1 else "[numeric]"
        lines.append(
            f"  - {{id: {qid}, question: 'What is the limit of component K{i} in the {corpus}?', "
            f"reference: '{sentence}', doc_id: [{', '.join(doc_ids)}], sources: ['{corpus}/k{i}.md'], "
            f"keywords: ['{value}'], tags: {tags}}}"
        )
    return "\n".join(lines) + "\n"


def config_yaml(
    *, concurrency: int, judge_url: str | None, judge_concurrency: int, metrics: str = "all"
) -> str:
    """rag-ci.yml for the simulated project. The `python` target entry is never imported:
    the benchmark injects a SimulatedTarget. `metrics: judge-free` keeps the retrieval tier only."""
    corpora = "".join(f"  {c}: {{description: simulated {c} manuals}}\n" for c in CORPORA)
    text = (
        "questions: questions.yml\n"
        f"corpora:\n{corpora}"
        "target:\n"
        "  kind: python\n"
        "  entry: benchmarks.simulators:not_used\n"
        f"  generator_model: {GENERATOR_MODEL}\n"
        f"  concurrency: {concurrency}\n"
        "  timeout_s: 120\n"
    )
    if judge_url:
        text += (
            "judge:\n"
            "  provider: openai-compatible\n"
            f"  model: {JUDGE_MODEL}\n"
            f"  base_url: {judge_url}\n"
            f"  concurrency: {judge_concurrency}\n"
            "  timeout_s: 120\n"
            "  prices: {input_per_mtok: 0.4, output_per_mtok: 1.6}\n"
        )
    if metrics == "judge-free":
        text += "metrics:\n  hit_at_k: {k: 5}\n  mrr: {}\n  ndcg: {k: 5}\n  source_recall: {k: 5}\n  keyword_coverage: {threshold: 0.6}\n  refusal: {}\n"
    return text


def command_target_yaml(*, latency_s: float, processes: int, concurrency: int, ids: bool = True) -> str:
    """A `kind: command` target block running the simulator as a process (simulated_rag_server.py)."""
    server = Path(__file__).with_name("simulated_rag_server.py")
    command = [sys.executable, str(server), "--latency", str(latency_s), *([] if ids else ["--no-ids"])]
    return (
        "target:\n"
        "  kind: command\n"
        f"  command: {json.dumps(command)}\n"
        f"  processes: {processes}\n"
        f"  generator_model: {GENERATOR_MODEL}\n"
        f"  concurrency: {concurrency}\n"
        "  timeout_s: 120\n"
    )


def write_project(
    folder: Path,
    *,
    questions: int,
    concurrency: int = 16,
    judge_url: str | None = None,
    judge_concurrency: int = 16,
    metrics: str = "all",
    refusals: bool = False,
    target: str | None = None,
) -> Path:
    """`target`: a target block replacing the (never imported) python one, e.g. command_target_yaml(...)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.yml").write_text(questions_yaml(questions, refusals=refusals), encoding="utf-8")
    config = folder / "rag-ci.yml"
    text = config_yaml(
        concurrency=concurrency, judge_url=judge_url, judge_concurrency=judge_concurrency, metrics=metrics
    )
    if target is not None:
        start = text.index("target:\n")
        end = text.index("  timeout_s: 120\n", start) + len("  timeout_s: 120\n")
        text = text[:start] + target + text[end:]
    config.write_text(text, encoding="utf-8")
    return config


class SimulatedTarget:
    """A RAG simulator: `latency_s` per call, deterministic answers; every 8th answer is wrong.

    Counts calls and the peak number of overlapping calls (to check the engine's concurrency).
    """

    max_parallel: int | None = None

    def __init__(self, latency_s: float = 0.1):
        self.latency_s = latency_s
        self.calls = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    async def start(self) -> None:
        pass

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency_s > 0:
                await asyncio.sleep(self.latency_s)
            return self.reply(request)
        finally:
            self.in_flight -= 1

    @staticmethod
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        if request["id"].startswith(WARMUP_ID_PREFIX):  # an unscored warm-up request
            return {"answer": "warm", "contexts": []}
        i = int(request["id"].split("-")[1])
        corpus, sentence = fact(i)
        routed = request["corpora"]
        home = corpus if corpus in routed else (routed[0] if routed else CORPORA[0])
        contexts = [
            {
                "text": sentence if home == corpus else f"Component K{i} is described in the {home} manual.",
                "doc_id": home,
                "source": f"{home}/k{i}.md#0",
                "score": 0.91,
            },
            {
                "text": f"Component K{i + 1} has a service interval of {i % 7 + 1} years.",
                "doc_id": home,
                "source": f"{home}/k{i + 1}.md#2",
                "score": 0.42,
            },
        ]
        if "Who designed" in request["question"]:
            answer = "I could not find this in the documents."
        elif i % 8 == 7:  # a wrong number: the judge fails it
            answer = sentence.replace(" is ", " is 1", 1)
        else:
            answer = sentence
        return {
            "answer": answer,
            "contexts": contexts,
            "usage": {
                "model": GENERATOR_MODEL,
                "input_tokens": 600,
                "output_tokens": 30,
                "cost_usd": 0.00012,
            },
        }

    async def stop(self) -> None:
        pass

    def diagnostics(self) -> str:
        return ""
