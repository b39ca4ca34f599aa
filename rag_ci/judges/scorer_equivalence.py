"""Carrying the baseline's verdicts over to a reworded answer that states the same facts.

With `judge.reuse_equivalent_answers`, one judge call (rag_ci.judges.equivalence) asks whether
the new answer states exactly the facts of the baseline's; when it does, the verdicts of the
metrics reading the answer are reused instead of judged again.
"""

from __future__ import annotations

from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.turns import verdict_hash
from rag_ci.core.results import Context, MetricResult, QuestionResult
from rag_ci.judges.cache import verdict_cache_key
from rag_ci.judges.call_context import CostMeter, judge_calls
from rag_ci.judges.equivalence import SameFacts, equivalence_prompt
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.scorer_model import DeepEvalModelLoading


class EquivalentCarrying(DeepEvalModelLoading):
    """The part of `DeepEvalJudgeScorer` (rag_ci.judges.scorer) that carries verdicts over."""

    full: bool
    reuse_equivalent: bool
    equivalence_calls: int
    equivalent_carries: int
    _digest: str

    async def _carry_equivalent(
        self,
        specs: list[JudgeMetricSpec],
        question: Question,
        answer: str,
        contexts: list[Context],
        baseline: QuestionResult | None,
    ) -> dict[str, MetricResult]:
        """The baseline's verdicts of the metrics reading the answer, when the judge finds the
        reworded answer states exactly the same facts (judge.reuse_equivalent_answers)."""
        if not self.reuse_equivalent or self.full or baseline is None or not answer.strip():
            return {}
        if (
            baseline.question_hash != question.content_hash
            or not baseline.answer
            or baseline.answer == answer
        ):
            return {}
        same_contexts = [c.text for c in baseline.contexts] == [c.text for c in contexts]
        old: dict[str, MetricResult] = {}
        for spec in specs:
            metric = baseline.metrics.get(spec.name)
            if not spec.uses_answer or (spec.uses_contexts and not same_contexts) or metric is None:
                continue
            # Only a verdict this judge gave on that answer (same fingerprint and metric identity).
            if metric.error is None and metric.cache_key == verdict_cache_key(
                self._digest, spec, verdict_hash(question), baseline.answer, baseline.contexts
            ):
                old[spec.name] = metric
        if not old:
            return {}
        await self.deepeval_model()  # prepares the environment the provider SDK is imported in
        meter = CostMeter()
        try:
            self.equivalence_calls += 1
            with judge_calls(meter=meter):
                reply = await self.client.call(
                    equivalence_prompt(question.question, baseline.answer, answer), SameFacts
                )
        except Exception:
            return {}
        if not reply.same_facts:
            return {}
        self.equivalent_carries += 1
        carried = {}
        for i, (name, metric) in enumerate(old.items()):
            key = verdict_cache_key(self._digest, self.specs[name], verdict_hash(question), answer, contexts)
            # the one call, counted once
            carried[name] = metric.model_copy(
                update={
                    "cached": True,
                    "equivalent_answer": True,
                    "cache_key": key,
                    "confirm_runs": [],
                    "unstable": False,
                    "judge_cost_usd": round(meter.cost_usd, 8) if i == 0 else 0.0,
                }
            )
        return carried
