"""A question's overall verdict, and which stage broke when it fails."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from rag_ci.core.results import MetricResult, Verdict

# Metrics that judge what was retrieved; the others judge the answer.
RETRIEVAL_STAGE = frozenset({"hit_at_k", "mrr", "ndcg", "source_precision", "source_recall", "contextual_precision", "contextual_recall"})
# The retrieval check used to classify failures, best first (DESIGN: expected source in
# the top k, or contextual recall when the question lists no sources).
_RETRIEVAL_CHECKS = ("hit_at_k", "contextual_recall")

Stage = Literal["retrieval", "generation", "both"]


def question_verdict(error: str | None, leaks: list[str], metrics: Mapping[str, MetricResult]) -> Verdict:
    """error > routing_error > fail > pass. A gating metric that errored is an error."""
    if error:
        return "error"
    if leaks:
        return "routing_error"
    if any(m.error for m in metrics.values()):
        return "error"
    if any(m.passed is False for m in metrics.values()):
        return "fail"
    return "pass"


def failure_stage(metrics: Mapping[str, MetricResult]) -> Stage | None:
    """Cross the retrieval check with the answer metrics to name the stage to fix.

    retrieval: the expected context was not retrieved, the answer metrics passed;
    generation: the right context was there (or none was expected), the answer failed;
    both: neither held.
    """
    retrieval_ok = next((metrics[n].passed for n in _RETRIEVAL_CHECKS if n in metrics and metrics[n].passed is not None), None)
    answer_failed = any(m.passed is False for name, m in metrics.items() if name not in RETRIEVAL_STAGE)
    retrieval_failed = retrieval_ok is False or any(
        m.passed is False for name, m in metrics.items() if name in RETRIEVAL_STAGE
    )
    if retrieval_failed and answer_failed:
        return "both"
    if retrieval_failed:
        return "retrieval"
    if answer_failed:
        return "generation"
    return None
