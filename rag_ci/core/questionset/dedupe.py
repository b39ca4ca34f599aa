"""Duplicate drafts, against the question set and among themselves.

Two questions are duplicates when they are routed alike (the same corpora, or both out of
scope) and read alike: the same words once normalised, or near-duplicates
(`draft_text.similarity` at or above `NEAR`). The same words asked of two corpora are
two questions (the example asks "What is the peak torque?" of both manuals on purpose).
LLM synthesizers repeat themselves (DeepEval's Synthesizer is known to return the same
golden twice, and two passages of one document often give the same question), so every
run says how many drafts it dropped and why.

Pure: texts in, the kept ones and the reasons out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from rag_ci.core.questionset.draft_text import normalise, similarity

NEAR = 0.85

T = TypeVar("T")


@dataclass(frozen=True)
class Known:
    """A question already in the set (or a draft kept before): what a new one is compared with."""

    id: str
    question: str
    route: Hashable  # frozenset of doc_ids, or "refusal"


@dataclass(frozen=True)
class Dropped(Generic[T]):
    item: T
    of: str  # the id (or label) of the question it duplicates
    score: float | None = None  # None: the same words; else how alike (near-duplicate)

    def reason(self, name: str | None = None) -> str:
        """"same words as DU2-TORQUE" / "near-duplicate of DU3-CAN-01 (0.91)"; `name` replaces `of`."""
        other = name or self.of
        return f"same words as {other}" if self.score is None else f"near-duplicate of {other} ({self.score:.2f})"


def route_of(doc_id: Iterable[str], refusal: bool) -> Hashable:
    return "refusal" if refusal else frozenset(doc_id)


def duplicate_of(question: str, route: Hashable, known: Sequence[Known], near: float = NEAR) -> tuple[str, float | None] | None:
    """(the known question it duplicates, its similarity or None for the same words), or None."""
    text = normalise(question)
    best: tuple[float, str] | None = None
    for other in known:
        if other.route != route:
            continue
        if normalise(other.question) == text:
            return other.id, None
        score = similarity(question, other.question)
        if score >= near and (best is None or score > best[0]):
            best = (score, other.id)
    return None if best is None else (best[1], best[0])


def dedupe(items: Sequence[T], *, existing: Sequence[Known], describe: Callable[[T], tuple[str, str, Hashable]], near: float = NEAR) -> tuple[list[T], list[Dropped[T]]]:
    """Keep each item that duplicates neither the set nor an item kept before it (in order).

    `describe(item)` -> (label, question text, route): the label names a kept item in the
    `of` of the ones dropped after it.
    """
    known = list(existing)
    kept: list[T] = []
    dropped: list[Dropped[T]] = []
    for item in items:
        label, question, route = describe(item)
        found = duplicate_of(question, route, known, near)
        if found is not None:
            dropped.append(Dropped(item, *found))
            continue
        kept.append(item)
        known.append(Known(label, question, route))
    return kept, dropped
