"""A question's overall verdict, and which stage broke when it fails."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from rag_ci.core.results import MetricResult, QuestionResult, Verdict

# Metrics that judge what was retrieved; the others judge the answer.
RETRIEVAL_STAGE = frozenset(
    {
        "hit_at_k",
        "mrr",
        "ndcg",
        "source_precision",
        "source_recall",
        "contextual_precision",
        "contextual_recall",
    }
)
# The retrieval check used to classify failures, best first (docs/gate.md: expected source in
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
    retrieval_ok = next(
        (metrics[n].passed for n in _RETRIEVAL_CHECKS if n in metrics and metrics[n].passed is not None), None
    )
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


def environment_error(record: QuestionResult) -> str | None:
    """Why the environment (target, judge) failed on this question; None when it did not.

    A routing leak is not one: it is the RAG's own fault, and it gates.
    """
    if record.error:
        return record.error
    return next((m.error for m in record.metrics.values() if m.error), None)


def broken_run_reason(questions: Sequence[QuestionResult], max_error_rate: float) -> str | None:
    """Why a run is not a result, or None when it is one.

    A run where the judge or the target was mostly unavailable says nothing about the
    RAG: comparing it would report N regressions (or, as a baseline, N gains later).
    """
    if not questions:
        return None
    causes = [cause for cause in map(environment_error, questions) if cause is not None]
    share = len(causes) / len(questions)
    if share <= max_error_rate:
        return None
    (cause, count), *_ = Counter(" ".join(c.split())[:300] for c in causes).most_common(1)
    return (
        f"{len(causes)}/{len(questions)} questions errored ({share:.0%}, above gate.max_error_rate "
        f"{max_error_rate:.0%}); most common error ({count}×): {cause}"
    )


def cut_at_word(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters (and "…") at a space: never inside a word, an id
    or a URL (a URL cut short is a link to somewhere else)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head[: limit - 1]).rstrip(" ,;:") + "…"


# What to check for the most common causes of errors, by what their message says.
_HINTS = (
    (
        re.compile(
            r"\b401\b|unauthori[sz]ed|invalid[ _-]?api[ _-]?key|incorrect api key|authentication", re.I
        ),
        "check the key",
    ),
    (re.compile(r"\b403\b|forbidden|permission", re.I), "check the key's permissions"),
    (
        re.compile(r"\b429\b|rate.?limit|quota", re.I),
        "rate-limited: lower the concurrency or raise the quota",
    ),
    (re.compile(r"timed? ?out|timeout", re.I), "it did not answer in time: is it up, is timeout_s enough?"),
    (
        re.compile(
            r"connection refused|connect(ion)? ?error|cannot connect|name or service not known|unreachable",
            re.I,
        ),
        "is it running and reachable?",
    ),
    (re.compile(r"\b5\d\d\b|server error|overloaded", re.I), "the service failed: re-run later"),
)


def error_causes(questions: Sequence[QuestionResult], limit: int = 5) -> list[tuple[int, str, str | None]]:
    """The errors of a run grouped by cause, most common first: (count, cause, what to check).

    A cause is the error's message on one line, cut at 160 characters, so questions that
    failed the same way count together ("38 × judge HTTP 401 … — check the key")."""
    causes = Counter(
        cut_at_word(" ".join(c.split()), 160) for c in map(environment_error, questions) if c is not None
    )
    return [
        (n, cause, next((hint for pattern, hint in _HINTS if pattern.search(cause)), None))
        for cause, n in causes.most_common(limit)
    ]
