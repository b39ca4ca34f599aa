"""Duplicate drafts, against the question set and among themselves.

Two questions are duplicates when they are routed alike (the same corpora, or both out of
scope) and read alike: the same words once normalised, or near-duplicates
(`similarity.similarity_matrix` at or above `NEAR`). The same words asked of two corpora are
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

import numpy as np

from rag_ci.core.questionset.similarity import Texts, similarity_matrix

# Calibrated on rapidfuzz's Indel ratio, which reads distinct questions ~0.08 higher than the
# difflib ratio it replaced (examples/questions.yml: distinct questions at most 0.83, the same
# question with the misspelt drafts' 1-3 typos at least 0.95; tests/unit/test_draft_core.py).
NEAR = 0.9
ROWS = 256  # drafts scored against the set at once

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
        """ "same words as DU2-TORQUE" / "near-duplicate of DU3-CAN-01 (0.91)"; `name` replaces `of`."""
        other = name or self.of
        return (
            f"same words as {other}"
            if self.score is None
            else f"near-duplicate of {other} ({self.score:.2f})"
        )


def route_of(doc_id: Iterable[str], refusal: bool) -> Hashable:
    return "refusal" if refusal else frozenset(doc_id)


def dedupe(
    items: Sequence[T],
    *,
    existing: Sequence[Known],
    describe: Callable[[T], tuple[str, str, Hashable]],
    near: float = NEAR,
) -> tuple[list[T], list[Dropped[T]]]:
    """Keep each item that duplicates neither the set nor an item kept before it (in order).

    `describe(item)` -> (label, question text, route): the label names a kept item in the
    `of` of the ones dropped after it. Every item is scored against the set and against the
    other items at once (two matrices); only the walk deciding what is kept goes item by item.
    """
    described = [describe(item) for item in items]
    vocabulary: dict[str, str] = {}
    drafts = Texts.of([question for _, question, _ in described], vocabulary)
    known = Texts.of([k.question for k in existing], vocabulary)
    among = similarity_matrix(drafts, drafts)
    route_ids: dict[Hashable, int] = {}
    set_routes = np.array([route_ids.setdefault(k.route, len(route_ids)) for k in existing], dtype=np.int64)
    routes = np.array(
        [route_ids.setdefault(route, len(route_ids)) for _, _, route in described], dtype=np.int64
    )
    labels = [k.id for k in existing]
    kept_at: list[int] = []
    kept: list[T] = []
    dropped: list[Dropped[T]] = []
    against_set = np.empty((0, len(existing)))
    for i, item in enumerate(items):
        if (
            i % ROWS == 0
        ):  # the set's scores a block of drafts at a time: memory stays bounded for a set of 50,000
            against_set = similarity_matrix(drafts.rows(i, i + ROWS), known)
        scores = np.concatenate([against_set[i % ROWS], among[i, kept_at]])
        alike = np.concatenate([set_routes, routes[kept_at]]) == routes[i]
        found = _duplicate(np.where(alike, scores, -1.0), near)
        if found is not None:
            dropped.append(Dropped(item, labels[found[0]], found[1]))
            continue
        kept.append(item)
        kept_at.append(i)
        labels.append(described[i][0])
    return kept, dropped


def _duplicate(scores: np.ndarray, near: float) -> tuple[int, float | None] | None:
    """(the index of the question duplicated, its likeness or None for the same words), or None:
    the first with the same words, else the likest at or above `near` (the first of equals)."""
    same = np.flatnonzero(scores >= 1.0)
    if same.size:
        return int(same[0]), None
    if not scores.size:
        return None
    best = int(np.argmax(scores))
    return (best, float(scores[best])) if scores[best] >= near else None
