"""The seam between the engine and an LLM judge (DeepEval lives behind it, in rag_ci.judges)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context, JudgeFingerprint, MetricResult, QuestionResult


class JudgeScorer(Protocol):
    """Scores one answer with the judge metrics; never raises for a judge failure.

    A judge failure (after retries) is a MetricResult with `error` set. Verdict
    caching and confirmation re-runs happen inside the scorer, which was built
    with the baseline it may reuse verdicts from.
    """

    fingerprint: JudgeFingerprint

    @property
    def stopped(self) -> str | None:
        """Why the judge makes no call any more and the run must stop with exit 2 (its spend
        cap reached, its credentials refused), or None. The answers it left unjudged are not
        evaluated (rag_ci.run.judge_stop)."""

    def check_generator(self, model: str) -> None:
        """Raise RagCiError when `model` (a generator) is of the judge's family."""

    def expect(self, questions: list[Question], baseline: Mapping[str, QuestionResult]) -> None:
        """The questions this run will ask, before the first answer: a chance to prepare."""

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
        """Judge metrics for one answer, keyed by metric name. A judged flip against `baseline`
        is confirmed by re-judging it; one confirmed pass → fail flip settles the question (a
        regression), so its other such flips keep their single verdict. `settled`: the answer
        already regressed on a judge-free metric, which settles it the same way. `confirm_each`:
        nothing settles the question (the accepted file names it): every flip is confirmed."""

    async def explain(self, record: QuestionResult, baseline: QuestionResult | None) -> QuestionResult:
        """`record` (its final result, judge metrics from `score`) with the judge's reasons on the
        verdicts a comparison with `baseline` prints; never raises for a judge failure."""

    async def aclose(self) -> None:
        """Close provider clients."""
