"""Sharding (docs/sharding.md): what "i/n" means and which 1/n slice a question belongs to. Pure.

The one place for it: `rag-ci run --shard` parses with `parse_shard` and answers
`select_shard`; a shard compares with the whole baseline restricted to it
(rag_ci.core.scoring.aggregate.restrict_to_shard);
`rag-ci merge` reads `meta.shard` back with `parse_shard` and checks `shard_of`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.questionset.conversations import conversation_of
from rag_ci.errors import RagCiError

Shard = tuple[int, int]  # (index, count): 1-based index among count


class ShardError(RagCiError):
    """Not a shard: the message says what was given and the form expected."""


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


Item = TypeVar("Item", bound=_HasId)


def parse_shard(text: str) -> Shard:
    """'2/4' -> (2, 4). Anything else raises ShardError naming the expected form."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ShardError(f"{text!r} is not a shard: use i/n, e.g. 2/4") from None
    if not 1 <= index <= count:
        raise ShardError(f"{text!r} is not a shard: i must be between 1 and n")
    return index, count


def shard_label(shard: Shard) -> str:
    """(2, 4) -> '2/4', the form parse_shard reads back."""
    return f"{shard[0]}/{shard[1]}"


def shard_of(question_id: str, count: int) -> int:
    """The 1-based shard of a question among `count`, by id hash.

    Hashing the id (not the position) keeps every question in its shard when
    others are added or removed. A conversation's turns (`CONV-7#3`) go by the conversation's
    id: a conversation is never split across shards (its live turns need each other's answers).
    """
    return int(stable_hash(conversation_of(question_id) or question_id), 16) % count + 1


def select_shard(items: Iterable[Item], shard: Shard | None) -> list[Item]:
    """The items (questions or their results) of one shard, in their order; all of them for None."""
    if shard is None:
        return list(items)
    index, count = shard
    return [item for item in items if shard_of(item.id, count) == index]
