"""Questions, answers and contexts for judge tests, and a mini engine that scores them.

`score_questions` does what the engine does with a `JudgeScorer` (score every
answer concurrently, wrap the metrics in QuestionResults and ask the reasons their
comparison with the baseline prints, build a RunResult whose
meta carries the judge fingerprint), so judge tests and benchmarks can run
without a target. The fake judge policy (rag_ci/judges/fake.py) rates `CORRECT`
answers as correct and `WRONG` answers as wrong.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from fakes.judge_setup import FAKE_KEYS
from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context, QuestionResult, RunMeta, RunResult
from rag_ci.core.scoring.verdict import question_verdict
from rag_ci.judges.build import build_judge


@dataclass(frozen=True)
class Case:
    question: Question
    correct: str
    wrong: str
    contexts: tuple[Context, ...]
    reworded: str  # another correct answer (changes the text, not the verdict)


def make_case(i: int) -> Case:
    value, unit = 10 + i, ["ms", "Nm", "V", "W"][i % 4]
    topic = ["transmission delay", "peak torque", "cut-off voltage", "rated power"][i % 4]
    q = Question(
        id=f"Q{i:02d}",
        question=f"What is the {topic} of unit {i}?",
        reference=f"The {topic} of unit {i} is {value} {unit}.",
        doc_id=("a",),
    )
    contexts = (
        Context(
            text=f"Unit {i} specification: the {topic} is {value} {unit}.", doc_id="a", source=f"a/u{i}.md#0"
        ),
        Context(text="Maintenance: clean the housing with a dry cloth.", doc_id="a", source="a/care.md#0"),
    )
    return Case(
        q,
        correct=f"The {topic} of unit {i} is {value} {unit}.",
        wrong=f"The {topic} of unit {i} is {value + 7} {unit}.",
        contexts=contexts,
        reworded=f"Unit {i} has a {topic} of {value} {unit}, per its specification.",
    )


REFUSAL = Question(id="OOS", question="Who is the CEO of the company?", expect="refusal")


def cases(n: int) -> list[Case]:
    return [make_case(i) for i in range(n)]


async def score_questions(
    scorer,
    items: list[tuple[Question, str, tuple[Context, ...] | list[Context]]],
    baseline: RunResult | None = None,
) -> RunResult:
    """Score (question, answer, contexts) triples like the engine does; returns a RunResult."""
    before = baseline.by_id() if baseline else {}

    async def one(question: Question, answer: str, contexts) -> QuestionResult:
        metrics = await scorer.score(question, answer, list(contexts), before.get(question.id))
        record = QuestionResult(
            id=question.id,
            question=question.question,
            question_hash=question.content_hash,
            corpora=["a"],
            expect=question.expect,
            reference=question.reference,
            request={"id": question.id},
            answer=answer,
            contexts=list(contexts),
            metrics=metrics,
            verdict=question_verdict(None, [], metrics),
            unstable=any(m.unstable for m in metrics.values()),
        )
        # the reasons a report prints, as the engine asks
        return await scorer.explain(record, before.get(question.id))

    records = await asyncio.gather(*(one(q, a, c) for q, a, c in items))
    meta = RunMeta(
        rag_ci_version="test",
        started_at="2026-01-01T00:00:00",
        question_set_version=1,
        question_set_hash="qs",
        config_fingerprint="cfg",
        target_kind="python",
        judge=scorer.fingerprint,
    )
    return RunResult(meta=meta, questions=list(records))


def score_cases(scorer, n: int = 1) -> RunResult:
    """Score the first `n` scripted cases with `scorer`, then close it (one asyncio.run)."""
    return _score_and_close(scorer, [(c.question, c.correct, c.contexts) for c in cases(n)])


def score_once(config, items, baseline: RunResult | None = None, full: bool = False):
    """Build the judge from `config` (fake keys), score `items` once, close it: (RunResult, scorer)."""
    scorer = build_judge(config, baseline=baseline, full=full, env=FAKE_KEYS)
    return _score_and_close(scorer, items, baseline), scorer


def _score_and_close(scorer, items, baseline: RunResult | None = None) -> RunResult:
    """One asyncio.run: score the items, then close the scorer's clients whatever happened."""

    async def go():
        try:
            return await score_questions(scorer, items, baseline)
        finally:
            await scorer.aclose()

    return asyncio.run(go())
