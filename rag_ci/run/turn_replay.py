"""Asking one question of a run, a conversation's live turn with the history it is asked after
(docs/conversations.md): the RAG's own answers to the turns before it, from this run's records."""

from __future__ import annotations

from collections.abc import Mapping

from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.routing import route
from rag_ci.core.questionset.turns import not_asked_after, with_live_history
from rag_ci.core.results import QuestionResult
from rag_ci.run.confirm_target import answer_with_noise_control
from rag_ci.run.replay import Replay


async def answer_in_turn(
    replay: Replay,
    question: Question,
    unit: list[Question],
    records: Mapping[str, QuestionResult],
    *,
    samples: int,
) -> QuestionResult:
    """`question` asked and scored (re-asks included); a live turn after the answers of the
    turns before it in `unit`, or not asked when one of them got no answer."""
    asked = with_live_history(question, unit, records)
    if isinstance(asked, str):
        return await not_asked_after(question, asked, route(question, replay.project.corpora))
    runs = replay.config.gate.confirm_target_runs
    return await answer_with_noise_control(replay, asked, samples=samples, runs=runs)
