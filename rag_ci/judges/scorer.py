"""`DeepEvalJudgeScorer`: the engine's `JudgeScorer`, built on DeepEval metrics.

Per answer, every applicable metric runs concurrently (the global limit is the
client's semaphore). Per metric:
1. verdict cache: the baseline's verdict is reused when the judge would see the same inputs;
2. otherwise a fresh DeepEval metric instance measures it with `include_reason=False`
   (the reason is DeepEval's last call and does not change the score); the judge
   calls whose reply the baseline kept (`rag_ci.judges.replies`: faithfulness' truths
   of unchanged contexts, its claims of an unchanged answer) are replayed, not made;
   judge failures after retries become `error` on that metric, never an exception;
3. confirmation (rag_ci.judges.confirm_policy, docs/noise.md "Judge noise"): a pass → fail
   flip is confirmed on both sides (the head's answer, then the baseline's stored answer,
   re-judged until one verdict leads by what the judge's disagreement rate needs); a changed
   answer failing a metric its baseline failed too gets the baseline's fail re-judged; a fail →
   pass flip (a gain) is judged again until a majority of `confirm_runs` verdicts agree. A
   question needs one gating flip established on both sides to regress (or get worse): its
   other such flips are then left as judged;
4. the reason (`explain`, once the engine has the question's whole record), for one
   failing verdict of a question the comparison with the baseline explains (a regression,
   a worse question, no usable baseline verdict: `rag_ci.core.comparison.question_change.reasons_shown`),
   and none when a failing verdict carries its reason already (GEval's): the chosen
   measurement again with `include_reason=True`, every step replayed from its own
   replies, so it costs one call and the score stays the same. A failing verdict
   nobody reads in this run (no baseline, a failure as before, a new question) keeps
   all its replies in results.json instead: the run that prints it asks its reason.

The scorer is written in four parts: this module (scoring and confirmation), loading the
DeepEval model (`rag_ci.judges.scorer_model`), carrying verdicts over to an equivalent answer
(`rag_ci.judges.scorer_equivalence`) and asking the reasons (`rag_ci.judges.scorer_reasons`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.turns import verdict_hash
from rag_ci.core.results import Context, JudgeFingerprint, MetricResult, QuestionResult
from rag_ci.core.scoring.judge_vote_odds import rule_for
from rag_ci.core.scoring.judge_votes import disagreement_rate
from rag_ci.judges.cache import VerdictCache, verdict_cache_key
from rag_ci.judges.call_context import CostMeter, for_this_task, judge_calls
from rag_ci.judges.client import JudgeClient, JudgeStats
from rag_ci.judges.confirm_policy import Confirmer
from rag_ci.judges.confirmation import Measurement as _Measurement
from rag_ci.judges.conversational import deepeval_case as judged_case
from rag_ci.judges.families import check_families
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.replies import CallLog
from rag_ci.judges.scorer_equivalence import EquivalentCarrying
from rag_ci.judges.scorer_reasons import ReasonExplaining
from rag_ci.judges.scorer_reasons import Unexplained as _Unexplained
from rag_ci.judges.scorer_reasons import reason_may_be_read as _reason_may_be_read


class DeepEvalJudgeScorer(ReasonExplaining, EquivalentCarrying):
    def __init__(
        self,
        *,
        fingerprint: JudgeFingerprint,
        specs: dict[str, JudgeMetricSpec],
        client: JudgeClient,
        judge_family: str,
        generator_family: str | None,
        cache: VerdictCache,
        full: bool,
        confirm_runs: int,
        preload: tuple[str, ...] = (),
        replies: Mapping[str, Any] | None = None,
        reuse_equivalent: bool = False,
        disagreement: float | None = None,
        votes_on_changed_answers: int = 1,
    ):
        self.fingerprint = fingerprint
        self.specs = specs
        self.client = client
        self._model = None  # the DeepEval adapter, built on the first judge call
        self._model_lock: asyncio.Lock | None = None
        self._prefetch: concurrent.futures.Future | None = None  # DeepEval's import, started early
        self._preload = preload  # the provider SDK's modules, imported with DeepEval off the loop
        self.judge_family = judge_family
        self.generator_family = generator_family  # target.generator_family: overrides lookups
        self.cache = cache
        self.full = full
        self.confirm_runs = confirm_runs
        self.cache_hits = 0
        self.replies = dict(replies or {})  # the baseline's portable judge replies (rag_ci.judges.replies)
        self.replayed_calls = 0  # judge calls answered from recorded replies
        self.reuse_equivalent = reuse_equivalent  # judge.reuse_equivalent_answers
        self.equivalence_calls = 0
        self.equivalent_carries = 0  # answers whose baseline verdicts were carried over
        # The judge's disagreement rate (calibration record, else the default): how many agreeing
        # votes establish a verdict (rag_ci.core.scoring.judge_votes).
        self.disagreement = disagreement_rate(disagreement)
        self._digest = fingerprint.digest()
        self._confirmer = Confirmer(
            self._judge,
            rule_for(self.disagreement, max(confirm_runs, 1)),
            confirm_runs,
            votes_on_changed_answers,
            self._digest,
            self.replies,
        )
        self._checked: set[str] = set()
        self._arrivals = itertools.count()  # order in which answers reach the judge: their calls' priority
        self._unexplained: dict[tuple[str, str, str], _Unexplained] = {}  # (question id, metric, cache key)
        self._questions: dict[
            str, tuple[Question, int]
        ] = {}  # scored, not yet explained: (question, priority)

    @property
    def confirmations(self) -> int:
        return self._confirmer.confirmations

    @property
    def stats(self) -> JudgeStats:
        return self.client.stats

    # -- family separation -------------------------------------------------

    def check_generator(self, model: str) -> None:
        if model in self._checked:
            return
        check_families(self.fingerprint.model, self.judge_family, model, self.generator_family)
        self._checked.add(model)

    # -- scoring -------------------------------------------------------------

    async def score(
        self,
        question: Question,
        answer: str,
        contexts: list[Context],
        baseline: QuestionResult | None,
        *,
        settled: bool = False,
        confirm_each: bool = False,
    ) -> dict[str, MetricResult]:
        specs = [s for s in self.specs.values() if s.applies_to(question)]
        # This answer's judge calls queue behind those of answers that arrived earlier.
        priority = next(self._arrivals)
        for_this_task(priority=priority)
        self._questions[question.id] = (question, priority)
        carried = await self._carry_equivalent(specs, question, answer, contexts, baseline)
        flips = _Settled(gating_flip_confirmed=settled and not confirm_each, confirm_each=confirm_each)
        results = await asyncio.gather(
            *(
                self._score_metric(s, question, answer, contexts, baseline, flips)
                for s in specs
                if s.name not in carried
            )
        )
        return {**carried, **{r.name: r for r in results}}

    async def _score_metric(
        self,
        spec: JudgeMetricSpec,
        question: Question,
        answer: str,
        contexts: list[Context],
        baseline: QuestionResult | None,
        settled: _Settled,
    ) -> MetricResult:
        key = verdict_cache_key(self._digest, spec, verdict_hash(question), answer, contexts)
        if not self.full:
            hit = self.cache.reuse(key)
            if hit is not None:
                self.cache_hits += 1
                return hit
        if spec.uses_answer and not answer.strip():
            # DeepEval refuses an empty actual_output; an empty answer fails without asking anyone.
            return _result(spec, key, score=0.0, reason="the answer is empty")
        case = (question, answer, contexts)
        runs = [await self._judge(spec, case, key, known=self.replies)]
        before = _baseline_metric(baseline, question, spec.name)
        chosen, decided = await self._confirmer.decide(spec, case, key, runs, before, baseline, settled)
        decided = decided.model_copy(update={"judge_replies": dict(chosen.log.portable)})
        if _reason_may_be_read(decided):
            # Whether a report shows it depends on the whole question (other metrics, retrieval):
            # `explain` decides once the question's record is complete.
            self._unexplained[(question.id, spec.name, key)] = _Unexplained(spec, case, chosen.log)
        return decided

    async def _judge(
        self,
        spec: JudgeMetricSpec,
        case: tuple[Question, str, list[Context]],
        key: str,
        *,
        known: Mapping[str, Any],
        include_reason: bool = False,
        fresh: bool = False,
    ) -> _Measurement:
        """One DeepEval measurement; `known` replies stand in for the judge calls they answer."""
        model = await self.deepeval_model()  # first: it prepares DeepEval's environment and imports it
        question, answer, contexts = case
        meter = CostMeter()
        # A reason pass replays every step and makes one call, the reason: never more.
        log = CallLog(self._digest, known=known, max_calls=1 if include_reason else None, fresh=fresh)
        try:
            metric = spec.build(model, include_reason=include_reason)
            test_case = judged_case(spec, question, answer, contexts)
            with judge_calls(meter=meter, calls=log):
                await metric.a_measure(test_case, _show_indicator=False)
        except Exception as exc:
            return _Measurement(_result(spec, key, error=_describe(exc), cost=meter.cost_usd), log)
        if not include_reason:
            self.replayed_calls += log.replayed
        score = None if metric.score is None else float(metric.score)
        return _Measurement(_result(spec, key, score=score, reason=metric.reason, cost=meter.cost_usd), log)

    async def aclose(self) -> None:
        await self.client.aclose()


@dataclass
class _Settled:
    """One question's gating flips (pass → fail against the baseline): one established on both
    sides decides the question (a regression, or worse), so its other
    gating flips keep their single verdict (`confirm_runs` empty) and cost no re-judgement.
    Flips outvoted by their confirmation settle nothing: the next one is confirmed. A
    question the engine found regressed without the judge starts settled. `confirm_each`
    (the accepted file names the question, and may accept the drop that would settle it):
    every flip is confirmed."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    gating_flip_confirmed: bool = False
    confirm_each: bool = False


def _baseline_metric(baseline: QuestionResult | None, question: Question, name: str) -> MetricResult | None:
    # A changed question is reported as such, never as a regression: no confirmation.
    if baseline is None or baseline.question_hash != question.content_hash:
        return None
    metric = baseline.metrics.get(name)
    if metric is None or metric.error is not None or metric.passed is None:
        return None
    return metric


def _result(
    spec: JudgeMetricSpec,
    key: str,
    *,
    score: float | None = None,
    reason: str | None = None,
    error: str | None = None,
    cost: float = 0.0,
) -> MetricResult:
    passed = None
    if error is None and score is not None and spec.threshold is not None:
        passed = score >= spec.threshold
    return MetricResult(
        name=spec.name,
        kind="judge",
        score=score,
        threshold=spec.threshold,
        passed=passed,
        reason=reason,
        error=error,
        judge_cost_usd=round(cost, 8),
        cache_key=key,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if type(exc).__name__ != "JudgeCallError":
        text = f"{type(exc).__name__}: {text}"
    return "judge error: " + text
