"""`DeepEvalJudgeScorer`: the engine's `JudgeScorer`, built on DeepEval metrics.

Per answer, every applicable metric runs concurrently (the global limit is the
client's semaphore). Per metric:
1. verdict cache: the baseline's verdict is reused when the judge would see the same inputs;
2. otherwise a fresh DeepEval metric instance measures it; judge failures after
   retries become `error` on that metric, never an exception;
3. confirmation: when the fresh verdict flips against the baseline's, the metric is
   judged again until `confirm_runs` verdicts exist; the majority decides (a tie
   keeps the baseline's verdict: a flip must be confirmed), any disagreement marks it
   `unstable`.
"""

from __future__ import annotations

import asyncio
import itertools

from rag_ci.core.questions import Question
from rag_ci.core.results import Context, JudgeFingerprint, MetricResult, QuestionResult
from rag_ci.judges.cache import VerdictCache, verdict_cache_key
from rag_ci.judges.client import (
    CostMeter,
    JudgeClient,
    JudgeStats,
    current_meter,
    current_priority,
)
from rag_ci.judges.families import check_families
from rag_ci.judges.metrics import JudgeMetricSpec, expected_output


class DeepEvalJudgeScorer:
    def __init__(self, *, fingerprint: JudgeFingerprint, specs: dict[str, JudgeMetricSpec], client: JudgeClient,
                 judge_family: str, generator_family: str | None, cache: VerdictCache, full: bool,
                 confirm_runs: int, preload: tuple[str, ...] = ()):
        self.fingerprint = fingerprint
        self.specs = specs
        self.client = client
        self._model = None  # the DeepEval adapter, built on the first judge call
        self._model_lock: asyncio.Lock | None = None
        self._preload = preload  # the provider SDK's modules, imported with DeepEval off the loop
        self.judge_family = judge_family
        self.generator_family = generator_family  # target.generator_family: overrides lookups
        self.cache = cache
        self.full = full
        self.confirm_runs = confirm_runs
        self.cache_hits = 0
        self.confirmations = 0
        self._digest = fingerprint.digest()
        self._checked: set[str] = set()
        self._arrivals = itertools.count()  # order in which answers reach the judge: their calls' priority

    @property
    def stats(self) -> JudgeStats:
        return self.client.stats

    async def deepeval_model(self):
        """The DeepEvalBaseLLM adapter, built when something must first be judged.

        Importing DeepEval takes seconds of CPU; done on the event loop it would stall
        every in-flight target request (and time them out), so it runs in a thread.
        A fully cached run never imports it at all.
        """
        if self._model is None:
            if self._model_lock is None:
                self._model_lock = asyncio.Lock()
            async with self._model_lock:
                if self._model is None:
                    self._model = await asyncio.to_thread(_load_deepeval_model, self.client, self.fingerprint.model,
                                                          self._preload)
        return self._model

    # -- family separation -------------------------------------------------

    def check_generator(self, model: str) -> None:
        if model in self._checked:
            return
        check_families(self.fingerprint.model, self.judge_family, model, self.generator_family)
        self._checked.add(model)

    # -- scoring -------------------------------------------------------------

    async def score(self, question: Question, answer: str, contexts: list[Context],
                    baseline: QuestionResult | None) -> dict[str, MetricResult]:
        specs = [s for s in self.specs.values() if s.applies_to(question)]
        # This answer's judge calls queue behind those of answers that arrived earlier.
        current_priority.set(next(self._arrivals))
        results = await asyncio.gather(*(self._score_metric(s, question, answer, contexts, baseline) for s in specs))
        return {r.name: r for r in results}

    async def _score_metric(self, spec: JudgeMetricSpec, question: Question, answer: str, contexts: list[Context],
                            baseline: QuestionResult | None) -> MetricResult:
        key = verdict_cache_key(self._digest, spec, question.content_hash, answer, contexts)
        if not self.full:
            hit = self.cache.reuse(key)
            if hit is not None:
                self.cache_hits += 1
                return hit
        if spec.uses_answer and not answer.strip():
            # DeepEval refuses an empty actual_output; an empty answer fails without asking anyone.
            return _result(spec, key, score=0.0, reason="the answer is empty")
        first = await self._judge(spec, question, answer, contexts, key)
        before = _baseline_metric(baseline, question, spec.name)
        if self.confirm_runs > 1 and before is not None and first.passed is not None and first.passed != before.passed:
            self.confirmations += 1
            more = await asyncio.gather(*(self._judge(spec, question, answer, contexts, key)
                                          for _ in range(self.confirm_runs - 1)))
            return decide_by_majority([first, *more], before.passed)
        return first

    async def _judge(self, spec: JudgeMetricSpec, question: Question, answer: str, contexts: list[Context],
                     key: str) -> MetricResult:
        model = await self.deepeval_model()  # first: it prepares DeepEval's environment and imports it
        from deepeval.test_case import LLMTestCase

        meter = CostMeter()
        token = current_meter.set(meter)
        try:
            metric = spec.build(model)
            case = LLMTestCase(input=question.question, actual_output=answer,
                               expected_output=expected_output(question),
                               retrieval_context=[c.text for c in contexts])
            await metric.a_measure(case, _show_indicator=False)
        except Exception as exc:  # noqa: BLE001 - a judge failure marks the metric, it never stops the run
            return _result(spec, key, error=_describe(exc), cost=meter.cost_usd)
        finally:
            current_meter.reset(token)
        score = None if metric.score is None else float(metric.score)
        return _result(spec, key, score=score, reason=metric.reason, cost=meter.cost_usd)

    async def aclose(self) -> None:
        await self.client.aclose()


def _load_deepeval_model(client: JudgeClient, model_name: str, preload: tuple[str, ...]):
    import importlib

    from rag_ci.judges.llm import RagCiJudgeModel

    for module in ("deepeval.metrics", "deepeval.test_case", *preload):  # slow imports, off the event loop
        importlib.import_module(module)
    return RagCiJudgeModel(client, model_name)


def decide_by_majority(runs: list[MetricResult], baseline_passed: bool) -> MetricResult:
    """Majority of the verdicts that did not error; a tie keeps the baseline's verdict."""
    cost = sum(r.judge_cost_usd for r in runs)
    votes = [r.passed for r in runs if r.error is None and r.passed is not None]
    passes, fails = votes.count(True), votes.count(False)
    verdict = True if passes > fails else False if fails > passes else baseline_passed
    chosen = next(r for r in runs if r.error is None and r.passed is verdict) if votes else runs[0]
    return chosen.model_copy(update={"confirm_runs": votes, "unstable": len(set(votes)) > 1, "judge_cost_usd": cost})


def _baseline_metric(baseline: QuestionResult | None, question: Question, name: str) -> MetricResult | None:
    # A changed question is reported as such, never as a regression: no confirmation.
    if baseline is None or baseline.question_hash != question.content_hash:
        return None
    metric = baseline.metrics.get(name)
    if metric is None or metric.error is not None or metric.passed is None:
        return None
    return metric


def _result(spec: JudgeMetricSpec, key: str, *, score: float | None = None, reason: str | None = None,
            error: str | None = None, cost: float = 0.0) -> MetricResult:
    passed = None
    if error is None and score is not None and spec.threshold is not None:
        passed = score >= spec.threshold
    return MetricResult(name=spec.name, kind="judge", score=score, threshold=spec.threshold, passed=passed,
                        reason=reason, error=error, judge_cost_usd=round(cost, 8), cache_key=key)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if type(exc).__name__ != "JudgeCallError":
        text = f"{type(exc).__name__}: {text}"
    return "judge error: " + text
