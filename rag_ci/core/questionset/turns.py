"""A conversation's turn as the run asks and judges it (docs/conversations.md). Pure.

- the request's `messages` (the history sent, then the turn's user message) and `conversation_id`;
- the live history: each earlier turn's user message and the RAG's own answer to it;
- the judge's view of a turn: its input holds the conversation so far, and its verdict key
  the history sent, so an unchanged conversation reuses every verdict and a changed earlier
  answer is judged afresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.questionset.conversations import ChatMessage, chat_messages, conversation_of
from rag_ci.core.questionset.questions import Question, TurnQuestion
from rag_ci.core.results import QuestionResult


class _Answered(Protocol):
    @property
    def answer(self) -> str | None: ...


def conversations_note(questions: Iterable[Question]) -> str:
    """', 13 of them turns of 6 conversations (4 live, 2 scripted)' for `rag-ci validate`; '' without."""
    turns = [q for q in questions if isinstance(q, TurnQuestion)]
    if not turns:
        return ""
    modes = {q.conversation: q.mode for q in turns}
    live = sum(1 for m in modes.values() if m == "live")
    return (
        f", {len(turns)} of them turns of {len(modes)} conversation{'s' if len(modes) != 1 else ''} "
        f"({live} live, {len(modes) - live} scripted)"
    )


def conversation_request(question: Question) -> dict[str, Any]:
    """The request fields a turn adds to `{"id", "question", "corpora"}`; {} for a plain question."""
    if not isinstance(question, TurnQuestion):
        return {}
    return {
        "messages": chat_messages(question.sent_history, question.question),
        "conversation_id": question.conversation,
    }


def live_units(questions: Iterable[Question]) -> list[list[Question]]:
    """The questions as units of asking, in order: a live conversation's turns together (asked
    one after another, each after the answer before it), every other question alone."""
    units: list[list[Question]] = []
    live: dict[str, list[Question]] = {}
    for question in questions:
        if isinstance(question, TurnQuestion) and question.mode == "live":
            if question.conversation not in live:
                live[question.conversation] = []
                units.append(live[question.conversation])
            live[question.conversation].append(question)
        else:
            units.append([question])
    for unit in units:
        unit.sort(key=lambda q: q.turn if isinstance(q, TurnQuestion) else 0)
    return units


def with_live_history(
    question: Question, turns: list[Question], records: Mapping[str, _Answered]
) -> Question | str:
    """A live turn with the history it is asked with: each earlier turn's user message and the
    RAG's answer to it (from `records`). The id of the earlier turn that got no answer when one
    did not (the turn cannot be asked as users would see it)."""
    if not isinstance(question, TurnQuestion) or question.mode != "live":
        return question
    said: list[ChatMessage] = []
    for earlier in turns:
        if not isinstance(earlier, TurnQuestion) or earlier.turn >= question.turn:
            continue
        record = records.get(earlier.id)
        if record is None or record.answer is None:
            return earlier.id
        said += [
            ChatMessage(role="user", content=earlier.question),
            ChatMessage(role="assistant", content=record.answer),
        ]
    return question.model_copy(update={"said": tuple(said)})


async def not_asked_after(question: Question, earlier: str, corpora: list[str]) -> QuestionResult:
    """The record of a live turn not asked because the earlier turn `earlier` got no answer
    (an awaitable, like the answer it stands for)."""
    return QuestionResult(
        id=question.id,
        question=question.question,
        question_hash=question.content_hash,
        corpora=corpora,
        tags=list(question.tags),
        expect=question.expect,
        reference=question.reference,
        keywords=list(question.keywords),
        request={},
        error=f"not asked: the conversation's turn {earlier} got no answer, so this turn has no history",
        verdict="error",
    )


def whole_conversations(kept: list[QuestionResult], questions: Iterable[Question]) -> list[QuestionResult]:
    """The finished records a resumed run keeps, less those of live conversations with a turn
    still to ask: the conversation is asked again whole (its later turns need the history as
    the RAG says it now)."""
    finished = {r.id for r in kept}
    unfinished = {
        q.conversation
        for q in questions
        if isinstance(q, TurnQuestion) and q.mode == "live" and q.id not in finished
    }
    return [r for r in kept if conversation_of(r.id) not in unfinished]


def judge_input(question: Question) -> str:
    """What the judge reads as the input of a turn: the conversation so far, then the last
    message (a follow-up like "and how long does that take?" means nothing alone)."""
    if not isinstance(question, TurnQuestion) or not question.sent_history:
        return question.question
    lines = [f"{m.role}: {m.content}" for m in question.sent_history]
    return "Conversation so far:\n" + "\n".join(lines) + f"\n\nLast user message: {question.question}"


def verdict_hash(question: Question) -> str:
    """The question's part of a judge verdict's key: its content hash, and for a turn the
    history actually sent (a live turn's holds the RAG's earlier answers)."""
    if not isinstance(question, TurnQuestion) or not question.sent_history:
        return question.content_hash
    history = [m.model_dump() for m in question.sent_history]
    return stable_hash({"question": question.content_hash, "history": history})
