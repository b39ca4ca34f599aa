"""Conversations in a comparison (docs/conversations.md): the turn that broke, and the turns that follow from it.

A live conversation's later turn is asked with the RAG's own earlier answers: once an earlier
answer changed, the later turn was asked something else than on the baseline. A later failing
turn whose history changed is shown as following from the conversation's first failing turn,
not as a regression of its own: the first turn that regressed is the row, the ones after it
are named on it. They still gate (each still fails); the report folds them. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rag_ci.core.comparison.comparison import Comparison
from rag_ci.core.comparison.question_change import QuestionChange
from rag_ci.core.questionset.conversations import conversation_of
from rag_ci.core.results import QuestionResult, RunResult
from rag_ci.core.scoring.verdict import cut_at_word


def _history(record: QuestionResult | None) -> list[Any] | None:
    """The messages a turn was asked after (its request's, less its own last one)."""
    if record is None or not isinstance(record.request.get("messages"), list):
        return None
    return list(record.request["messages"][:-1])


def _history_lines(record: QuestionResult | None) -> tuple[str, ...]:
    """The history a turn was asked after, a line per message, each cut (the report's before/after)."""
    return tuple(
        f"{m.get('role')}: {cut_at_word(' '.join(str(m.get('content', '')).split()), 200)}"
        for m in _history(record) or []
        if isinstance(m, dict)
    )


def _turn(question_id: str) -> int:
    return int(question_id.rpartition("#")[2])


def _last_user_words(record: QuestionResult | None) -> str | None:
    history = _history(record) or []
    said = [m.get("content") for m in history if isinstance(m, dict) and m.get("role") == "user"]
    return cut_at_word(" ".join(str(said[-1]).split()), 80) if said else None


def follow_turns(comparison: Comparison, base: RunResult, head: RunResult) -> Comparison:
    """The comparison with each conversation's failing turns told apart: `following` maps a turn
    whose history changed to the earlier failing turn it follows from, and the rows' notes say
    which turn of which conversation each is, after what, and what follows from it."""
    gating = [c for c in (*comparison.regressions, *comparison.worse) if conversation_of(c.id)]
    if not gating:
        return comparison
    base_records: Mapping[str, QuestionResult] = {q.id: q for q in base.questions}
    head_records: Mapping[str, QuestionResult] = {q.id: q for q in head.questions}
    following: dict[str, str] = {}
    leaders: dict[str, str] = {}  # conversation -> its turn that broke
    for change in sorted(gating, key=lambda c: (conversation_of(c.id), _turn(c.id))):
        conversation = conversation_of(change.id) or ""
        old, new = base_records.get(change.id), head_records.get(change.id)
        if conversation in leaders and _history(old) != _history(new):
            following[change.id] = leaders[conversation]
        else:
            leaders[conversation] = change.id
    notes = {c.id: _turn_notes(c, following, head_records, base_records) for c in gating}

    def noted(changes: tuple[QuestionChange, ...]) -> tuple[QuestionChange, ...]:
        return tuple(
            replace(c, notes=(*c.notes, *notes[c.id]), history=_history_lines(head_records.get(c.id)))
            if c.id in notes
            else c
            for c in changes
        )

    return replace(
        comparison,
        regressions=noted(comparison.regressions),
        worse=noted(comparison.worse),
        following=following,
    )


def _turn_notes(
    change: QuestionChange,
    following: Mapping[str, str],
    head: Mapping[str, QuestionResult],
    base: Mapping[str, QuestionResult],
) -> tuple[str, ...]:
    conversation = conversation_of(change.id)
    notes = [f"turn {_turn(change.id)} of {conversation}"]
    after = _last_user_words(head.get(change.id))
    if after:
        notes[0] += f", after “{after}”"
    if change.id in following:
        notes.append(f"follows from {following[change.id]}: its history holds that turn's changed answer")
        return tuple(notes)
    if _history(base.get(change.id)) != _history(head.get(change.id)):
        notes.append("its history changed since the baseline (an earlier answer differs)")
    later = sorted((t for t, leader in following.items() if leader == change.id), key=_turn)
    if later:
        notes.append("later turns following from it: " + ", ".join(later))
    return tuple(notes)
