"""Sharding (DESIGN §11): which 1/n slice a question belongs to. Pure."""

from __future__ import annotations

from rag_ci.core.aggregate import aggregate
from rag_ci.core.hashing import stable_hash
from rag_ci.core.results import RunResult


def shard_of(question_id: str, count: int) -> int:
    """The 1-based shard of a question among `count`, by id hash.

    Hashing the id (not the position) keeps every question in its shard when
    others are added or removed.
    """
    return int(stable_hash(question_id), 16) % count + 1


def restrict_to_shard(result: RunResult, shard: tuple[int, int]) -> RunResult:
    """The part of a whole run (a baseline) that one shard covers.

    Compared with the whole baseline, a shard would report every other shard's
    questions as removed.
    """
    index, count = shard
    kept = [q for q in result.questions if shard_of(q.id, count) == index]
    return result.model_copy(update={"questions": kept, "aggregates": aggregate(kept)})
