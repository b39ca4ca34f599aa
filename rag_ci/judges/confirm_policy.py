"""Which freshly judged verdicts are judged again, and how (docs/noise.md, "Judge noise").

Against the baseline's verdict of the same question and metric:
- pass → fail: a drop, confirmed on both sides (`confirmation.confirm_drop`);
- fail → fail on inputs the baseline's verdict was not given on: the baseline's fail may be
  noise hiding a regression (`confirmation.confirm_stored_fail`);
- fail → pass: a gain, confirmed by a majority (never gating);
- pass → pass on changed inputs, under `judge.votes_on_changed_answers: 2`: a second verdict,
  since one verdict misses p of the truly failing answers; a failing second one is a drop.
A question needs one gating flip established on both sides (the scorer's `settled`): its
other flips then keep their verdict as judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_ci.core.questionset.turns import verdict_hash
from rag_ci.core.results import MetricResult, QuestionResult
from rag_ci.core.scoring.judge_votes import Rule, stored_fail_holds_at
from rag_ci.judges.cache import verdict_cache_key
from rag_ci.judges.confirmation import (
    HEAD,
    Case,
    ConfirmationError,
    Judge,
    Measurement,
    confirm_drop,
    confirm_gain,
    confirm_stored_fail,
    errored,
)
from rag_ci.judges.metrics import JudgeMetricSpec


@dataclass
class Confirmer:
    judge: Judge
    rule: Rule
    confirm_runs: int  # gate.confirm_runs: 0 or 1 turns re-judging off
    votes_on_changed: int  # judge.votes_on_changed_answers
    digest: str  # the judge fingerprint's, for the verdict-cache key of the baseline's stored answer
    known: Mapping[str, Any]  # the baseline's portable judge replies
    confirmations: int = 0

    async def decide(
        self,
        spec: JudgeMetricSpec,
        case: Case,
        key: str,
        runs: list[Measurement],
        before: MetricResult | None,
        baseline: QuestionResult | None,
        settled: Any,  # the scorer's _Settled: lock, gating_flip_confirmed, confirm_each
    ) -> tuple[Measurement, MetricResult]:
        first = runs[0].result
        if self.confirm_runs <= 1 or baseline is None or before is None or first.passed is None:
            return runs[0], first
        changed = before.cache_key != key
        if (
            first.passed
            and before.passed
            and changed
            and self.votes_on_changed > 1
            and not settled.gating_flip_confirmed  # a settled question's other flips stay as judged
        ):
            second = await self.judge(spec, case, key, known=runs[0].log.extraction(), fresh=True)
            if second.result.error is not None or second.result.passed is None:
                return runs[0], errored(runs[0], runs, ConfirmationError(second, HEAD), 0)
            runs.append(second)
        if before.passed and not any(r.result.passed is False for r in runs):
            return runs[0], _second_kept(runs)
        if not before.passed and first.passed:  # a gain, confirmed so that noise is not reported as one
            self.confirmations += 1
            return await confirm_gain(self.judge, spec, case, key, runs, self.confirm_runs)
        if not before.passed and not changed:
            return runs[0], first
        async with settled.lock:  # the question's gating flips are confirmed one at a time
            if settled.gating_flip_confirmed:
                return runs[0], _second_kept(runs) if before.passed else first
            chosen, decided = await self._gating(spec, case, key, runs, before, baseline)
            settled.gating_flip_confirmed = decided.baseline_confirmed is True and not settled.confirm_each
            return chosen, decided

    async def _gating(
        self,
        spec: JudgeMetricSpec,
        case: Case,
        key: str,
        runs: list[Measurement],
        before: MetricResult,
        baseline: QuestionResult,
    ) -> tuple[Measurement, MetricResult]:
        stored, stored_key = self._stored(spec, case, before, baseline)
        if not before.passed:
            if stored is None:  # the baseline's fail cannot be asked again: it stands
                return runs[0], runs[0].result
            self.confirmations += 1
            return await confirm_stored_fail(
                self.judge,
                spec,
                case,
                key,
                runs,
                stored,
                stored_key or "",
                rule=self.rule,
                known=self.known,
                holds_at=stored_fail_holds_at(self.votes_on_changed),
            )
        self.confirmations += 1
        return await confirm_drop(
            self.judge, spec, case, key, runs, before, stored, stored_key, rule=self.rule, known=self.known
        )

    def _stored(
        self, spec: JudgeMetricSpec, case: Case, before: MetricResult, baseline: QuestionResult
    ) -> tuple[Case | None, str | None]:
        """The baseline's stored answer and contexts, when they are what its verdict was given on
        (the same verdict-cache key): a stored answer replaced or emptied since is not asked again."""
        question = case[0]
        answer = baseline.answer or ""
        if spec.uses_answer and not answer.strip():
            return None, None
        key = verdict_cache_key(self.digest, spec, verdict_hash(question), answer, list(baseline.contexts))
        if before.cache_key is not None and before.cache_key != key:
            return None, None
        return (question, answer, list(baseline.contexts)), key


def _second_kept(runs: list[Measurement]) -> MetricResult:
    """The first verdict, with the second one's votes and cost when one was asked."""
    if len(runs) == 1:
        return runs[0].result
    return runs[0].result.model_copy(
        update={
            "confirm_runs": [r.result.passed is True for r in runs],
            "unstable": len({r.result.passed for r in runs}) > 1,
            "judge_cost_usd": round(sum(r.result.judge_cost_usd for r in runs), 8),
            "confirm_calls": sum(r.log.calls for r in runs[1:]),
        }
    )
