"""Generator noise in the engine (docs/noise.md): ask a question more than once when it matters.

Two cases, per question:
* `samples` > 1 (the baseline on main, `baseline.samples`): ask it `samples` times; the
  verdict is the majority (a tie passes) and the pass rate k/n is recorded;
* otherwise, a question that passed on the baseline and does not pass now (same content
  hash) is re-asked one sample at a time under the re-ask rule (rag_ci/core/comparison/noise.py):
  the first passing sample clears it as flaky, `confirm_target_runs` more failures make
  it a regression. Sequential on purpose: most noise flips end after one extra call.

Each sample is a fresh target call, scored like any answer: the verdict cache and judge
confirmation apply per sample, and an answer repeated within the question reuses its
verdicts. The record's answer, contexts, metrics, latency and verdict are those of a
representative sample, all samples are in `samples`:
* re-asked: the first sample (the failure that triggered the re-asks). Keeping it keeps
  the run's pass rates one draw per question, comparable with the baseline's; the
  decision lives in `flaky` (a sample passed: compare lists it as flaky, not gating);
* sampled baseline: the first sample with the majority verdict.
"""

from __future__ import annotations

from typing import Any

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.comparison.noise import majority_passes, reask_decision, should_reask
from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import QuestionResult, Sample


async def answer_with_noise_control(
    replay: Any, question: Question, *, samples: int, runs: int
) -> QuestionResult:
    """`replay` is rag_ci.run.replay.Replay: `answer(question, judged, again=)`, `baseline` by id and the
    target's `breaker`: once it has tripped, nothing is asked again (docs/targets.md)."""
    judged: dict = {}
    first = await replay.answer(question, judged)
    if samples > 1:
        records = [first]
        for _ in range(samples - 1):
            again = await replay.answer(question, judged, again=True)
            if replay.breaker.left_unanswered(again.error):  # the target stopped answering: no more samples
                break
            records.append(again)
        verdict = majority_passes([r.passed for r in records])
        return _combine(next(r for r in records if r.passed == verdict), records, reasked=False)
    if replay.breaker.tripped or not should_reask(first, replay.baseline.get(question.id), runs):
        return first
    records = [first]
    while reask_decision([r.passed for r in records], runs) == "ask_again":
        if replay.breaker.tripped:  # a broken run is no evidence either way: no re-asks
            break
        again = await replay.answer(question, judged, again=True)
        if replay.breaker.left_unanswered(again.error):  # tripped while this re-ask waited
            break
        records.append(again)
    return _combine(records[0], records, reasked=True) if len(records) > 1 else first


def _sample(record: QuestionResult) -> Sample:
    return Sample(
        verdict=record.verdict,
        metrics={name: None if m.error else m.passed for name, m in record.metrics.items()},
        answer_hash=None if record.answer is None else stable_hash(record.answer),
        latency_s=record.latency_s,
        cost_usd=record.cost_usd,
        judge_cost_usd=record.judge_cost_usd,
    )


def _combine(
    representative: QuestionResult, records: list[QuestionResult], *, reasked: bool
) -> QuestionResult:
    outcomes = [r.passed for r in records]
    return representative.model_copy(
        update={
            "samples": [_sample(r) for r in records],
            "pass_rate": round(sum(outcomes) / len(outcomes), 4),
            "flaky": len(set(outcomes)) > 1,
            "reasked": reasked,
            "unstable": any(r.unstable for r in records),
        }
    )
