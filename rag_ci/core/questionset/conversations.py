"""Conversations in questions.yml (docs/conversations.md): a chat RAG gated turn by turn.

A conversation sits beside the questions: an id, a mode and turns. Each turn the RAG is
asked becomes one question of the set (rag_ci.core.questionset.questions.TurnQuestion) with
the id `CONV-7#3` (its 1-based position in the conversation), so everything that works per
question (routing, metrics, the verdict cache, comparison, accepted regressions, shards by
conversation) works per turn.

- *live*: every turn is asked, in order; the RAG's own earlier answers are the history of the
  next turn (what users see). No turn carries `assistant`.
- *scripted*: the history is written out: every turn but the last carries `assistant` (what the
  assistant said); the last turn is asked, and so is any earlier one marked `ask: true`, each
  with the written history before it. Deterministic: turns are asked independently.

This module reads the file's `conversations:` into plain turn fields; the question model
builds them. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticError

from rag_ci.core.base.yamlsrc import line_of, to_plain
from rag_ci.core.config import pydantic_problems

Mode = Literal["live", "scripted"]
TURN_SEPARATOR = "#"


class ChatMessage(BaseModel):
    """One message of a conversation, in the shape chat APIs use."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["user", "assistant"]
    content: str


def _one_or_many(value: object) -> object:
    return (value,) if isinstance(value, str) else value


class Turn(BaseModel):
    """One turn as written: the user's message and what a good answer to it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str = Field(description="What the user says in this turn (may refer back: 'and for the DU-3?').")
    assistant: str | None = Field(
        None,
        description="Scripted mode only: what the assistant answered, given as history for the later turns.",
    )
    ask: bool = Field(
        False,
        description="Scripted mode only: also ask this earlier turn (with the history written before it).",
    )
    reference: str | None = Field(None, description="The reference answer of this turn, as for a question.")
    doc_id: tuple[str, ...] = Field(
        (), description="The corpora this turn is routed to; absent: the conversation's `doc_id`."
    )
    sources: tuple[str, ...] = Field((), description="Documents a good retrieval returns for this turn.")
    keywords: tuple[str, ...] = Field((), description="Expected in a good answer to this turn.")
    expect: Literal["answer", "refusal"] = Field(
        "answer", description="`refusal`: this turn is out of scope."
    )

    @field_validator("user")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the user's message is empty")
        return value

    @field_validator("doc_id", "sources", "keywords", mode="before")
    @classmethod
    def _many(cls, value: object) -> object:
        return _one_or_many(value)


class Conversation(BaseModel):
    """A conversation as written in questions.yml's `conversations:`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Stable and unique; its turns are `ID#1`, `ID#2`...")
    mode: Mode = Field(
        "live",
        description="`live`: the RAG answers every turn, its answers become the history; "
        "`scripted`: the history is written (`assistant`), the last turn is asked.",
    )
    doc_id: tuple[str, ...] = Field((), description="The turns' corpora, unless a turn names its own.")
    tags: tuple[str, ...] = Field((), description="Free labels, given to every turn.")
    turns: tuple[Turn, ...] = Field(min_length=1, description="The turns, in order.")

    @field_validator("id")
    @classmethod
    def _no_separator(cls, value: str) -> str:
        if TURN_SEPARATOR in value:
            raise ValueError(
                f"a conversation id holds no '{TURN_SEPARATOR}' (its turns are `ID#1`, `ID#2`...)"
            )
        return value

    @field_validator("doc_id", "tags", mode="before")
    @classmethod
    def _many(cls, value: object) -> object:
        return _one_or_many(value)

    @model_validator(mode="after")
    def _mode_rules(self) -> Conversation:
        for number, turn in enumerate(self.turns, 1):
            if self.mode == "live" and (turn.assistant is not None or turn.ask):
                raise ValueError(
                    f"turn {number}: a live conversation's answers are the RAG's own: "
                    "`assistant` and `ask` belong to `mode: scripted`"
                )
            last = number == len(self.turns)
            if self.mode == "scripted" and not last and turn.assistant is None:
                raise ValueError(
                    f"turn {number}: a scripted conversation writes the history: every turn but the last "
                    "needs `assistant` (what the assistant answered)"
                )
            if self.mode == "scripted" and last and turn.assistant is not None:
                raise ValueError(
                    f"turn {number}: the last turn of a scripted conversation is the one asked: no `assistant`"
                )
        return self


def turn_id(conversation: str, number: int) -> str:
    return f"{conversation}{TURN_SEPARATOR}{number}"


def conversation_of(question_id: str) -> str | None:
    """'CONV-7#3' -> 'CONV-7'; None for an id that is not a turn's."""
    head, sep, tail = question_id.rpartition(TURN_SEPARATOR)
    return head if sep and head and tail.isdigit() else None


def turn_fields(conversation: Conversation) -> list[dict[str, Any]]:
    """The fields of each turn the RAG is asked, as a question: its id, text, expectations,
    and the conversation's (id, turn number, mode, the history written before it)."""
    asked: list[dict[str, Any]] = []
    written: list[ChatMessage] = []
    for number, turn in enumerate(conversation.turns, 1):
        if conversation.mode == "live" or turn.assistant is None or turn.ask:
            asked.append(
                {
                    "id": turn_id(conversation.id, number),
                    "question": turn.user,
                    "reference": turn.reference,
                    "doc_id": turn.doc_id or conversation.doc_id,
                    "sources": turn.sources,
                    "keywords": turn.keywords,
                    "expect": turn.expect,
                    "tags": conversation.tags,
                    "conversation": conversation.id,
                    "turn": number,
                    "mode": conversation.mode,
                    "history": tuple(written),
                    "last": number == len(conversation.turns),
                }
            )
        written.append(ChatMessage(role="user", content=turn.user))
        if turn.assistant is not None:
            written.append(ChatMessage(role="assistant", content=turn.assistant))
    return asked


def read_conversations(
    items: object, filename: str
) -> tuple[list[tuple[int | None, dict[str, Any]]], list[str]]:
    """questions.yml's `conversations:` -> (each asked turn's line and fields, problems)."""
    if items is None:
        return [], []
    if not isinstance(items, list):
        return [], [f"{filename}:1: `conversations` must be a list"]
    turns: list[tuple[int | None, dict[str, Any]]] = []
    problems: list[str] = []
    seen: dict[str, int | None] = {}
    for index, item in enumerate(items):
        line = line_of(items, index)
        cid = item.get("id") if isinstance(item, dict) else None
        label = f"conversation {cid}" if cid else f"conversation #{index + 1}"
        if not isinstance(item, dict):
            problems.append(f"{filename}:{line}: {label}: expected a mapping")
            continue
        try:
            conversation = Conversation.model_validate(to_plain(item))
        except PydanticError as exc:
            problems.extend(pydantic_problems(exc, item, filename, label))
            continue
        if conversation.id in seen:
            problems.append(
                f"{filename}:{line}: {label}: duplicate id (first at line {seen[conversation.id]})"
            )
            continue
        seen[conversation.id] = line
        written = item.get("turns")
        for fields in turn_fields(conversation):
            at = line_of(written, fields["turn"] - 1) if isinstance(written, list) else None
            turns.append((at or line, fields))
    return turns, problems


def chat_messages(history: tuple[ChatMessage, ...], user: str) -> list[dict[str, str]]:
    """The request's `messages`: the history, then this turn's user message (what chat APIs take)."""
    return [*(m.model_dump() for m in history), {"role": "user", "content": user}]
