"""What the accepted file did to a comparison (docs/accepted.md): the regressions it let pass,
and its entries that matched nothing. The file itself is read and applied by rag_ci.core.review.accepted;
these are the comparison's own vocabulary, so `Comparison` can name them without importing the review."""

from __future__ import annotations

from dataclasses import dataclass

from rag_ci.core.comparison.question_change import QuestionChange


@dataclass(frozen=True)
class AcceptedChange:
    """A regression (or worse question) that passes the gate because the file accepts it."""

    change: QuestionChange
    reasons: tuple[str, ...]
    metrics: tuple[str, ...]  # the metrics that crossed down (empty: a verdict change, e.g. an error)
    sources: tuple[str, ...] = ()  # where the accepting entries are ("accepted.yml:3")


@dataclass(frozen=True)
class StaleAcceptance:
    id: str
    metric: str | None
    reason: str
    why: str
    where: str = ""  # the entry's file and line
    # It matched a regression of this run but does not cover it (other metrics regressed too):
    # the entry needs completing, not removing.
    insufficient: bool = False
