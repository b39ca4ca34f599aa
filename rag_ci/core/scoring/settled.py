"""When an answer is a regression before the judge speaks: its judged flips then need no confirmation.

Confirmation re-judges a pass → fail flip so that judge noise is never a regression
(docs/judges.md). An answer failing a judge-free metric its baseline passed is already a
regression that no judge noise explains, as after one confirmed flip. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_ci.core.config import JUDGE_METRICS
from rag_ci.core.results import GatePolicy, MetricResult, QuestionResult


def settling_metrics(now: GatePolicy, baseline: GatePolicy | None) -> frozenset[str]:
    """The judge-free metrics defined alike in this run and its baseline (threshold, k...):
    only their pass → fail is the same test failing on another answer."""
    if (
        baseline is None
    ):  # a baseline from before the policy was recorded: nothing to compare definitions with
        return frozenset()
    return frozenset(
        name
        for name, definition in now.metrics.items()
        if name not in JUDGE_METRICS and baseline.metrics.get(name) == definition
    )


def regressed_without_judge(
    metrics: Mapping[str, MetricResult],
    baseline: QuestionResult | None,
    question_hash: str,
    settling: frozenset[str],
) -> bool:
    """This answer fails one of the `settling` metrics its baseline (the same question) passed."""
    if baseline is None or baseline.question_hash != question_hash:
        return False
    return any(
        metric.passed is False and (old := baseline.metrics.get(name)) is not None and old.passed is True
        for name, metric in metrics.items()
        if name in settling
    )
