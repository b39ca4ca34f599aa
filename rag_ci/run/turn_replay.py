"""Asking one question of a run, a conversation's live turn with the history it is asked after
(docs/conversations.md): the RAG's own answers to the turns before it, from this run's records.
A live turn re-asked (generator noise, rag_ci/run/confirm_target.py) is asked in a conversation
asked again whole: its earlier turns first, the RAG's fresh answers as its history."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_ci.core.questionset.conversations import ChatMessage
from rag_ci.core.questionset.questions import Question, TurnQuestion
from rag_ci.core.questionset.routing import route
from rag_ci.core.questionset.turns import conversation_request, not_asked_after, with_live_history
from rag_ci.core.results import QuestionResult
from rag_ci.run.confirm_target import answer_with_noise_control
from rag_ci.run.replay import Replay, traced_request


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
    asking: Any = replay
    if isinstance(asked, TurnQuestion) and asked.said:
        asking = WholeConversation(replay, unit)
    return await answer_with_noise_control(asking, asked, samples=samples, runs=runs)


class WholeConversation:
    """The replay as the re-ask rule sees it, for a live turn after others: the first answer is
    the turn's as asked; each later one asks the conversation again from its first turn, under a
    conversation id of its own (`C-7~2`: a RAG with server-side memory starts afresh)."""

    def __init__(self, replay: Replay, turns: list[Question]):
        self.replay, self.turns = replay, turns
        self.baseline, self.breaker = replay.baseline, replay.breaker
        self.asked = 1

    async def answer(self, question: Question, judged: dict, *, again: bool = False) -> QuestionResult:
        if not again:
            return await self.replay.answer(question, judged)
        self.asked += 1
        fresh = await self._asked_again(question)
        return await self.replay.answer(fresh or question, judged, again=True)

    async def _asked_again(self, question: Question) -> Question | None:
        """`question` with the history of its conversation asked again; None when an earlier turn
        got no answer this time (the turn is then asked with the history it had)."""
        if not isinstance(question, TurnQuestion):
            return None
        conversation = f"{question.conversation}~{self.asked}"
        said: list[ChatMessage] = []
        for earlier in self.turns:
            if not isinstance(earlier, TurnQuestion) or earlier.turn >= question.turn:
                continue
            again = earlier.model_copy(update={"said": tuple(said), "conversation": conversation})
            request = {
                **traced_request(
                    f"{earlier.id}~{self.asked}",
                    earlier.question,
                    route(earlier, self.replay.project.corpora),
                ),
                **conversation_request(again),
            }
            async with self.replay.slots:
                reply, _, _ = await self.replay.ask(request, counts=False)
            if reply is None:
                return None
            said += [
                ChatMessage(role="user", content=earlier.question),
                ChatMessage(role="assistant", content=reply.answer),
            ]
        return question.model_copy(update={"said": tuple(said), "conversation": conversation})
