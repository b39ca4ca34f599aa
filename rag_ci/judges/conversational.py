"""The test case DeepEval judges a turn with (docs/conversations.md).

The per-question metrics read a turn as DeepEval's LLMTestCase, its input the conversation so far
then the last user message (rag_ci.core.questionset.turns.judge_input). The conversation-level
metrics (knowledge retention, conversation completeness) read the whole conversation up to and
including this turn's answer as DeepEval's ConversationalTestCase. Imports DeepEval when called.
"""

from __future__ import annotations

from typing import Any

from rag_ci.core.questionset.questions import Question, TurnQuestion
from rag_ci.core.questionset.turns import judge_input
from rag_ci.core.results import Context
from rag_ci.judges.metrics import JudgeMetricSpec, expected_output


def deepeval_case(spec: JudgeMetricSpec, question: Question, answer: str, contexts: list[Context]) -> Any:
    """DeepEval's test case for `spec` on this answer: a conversation's for a conversation-level
    metric, else the single-turn one every other metric reads."""
    from deepeval.test_case import ConversationalTestCase, LLMTestCase, Turn

    if spec.conversational and isinstance(question, TurnQuestion):
        said = [Turn(role=m.role, content=m.content) for m in question.sent_history]
        return ConversationalTestCase(
            turns=[
                *said,
                Turn(role="user", content=question.question),
                Turn(role="assistant", content=answer),
            ]
        )
    return LLMTestCase(
        input=judge_input(question),
        actual_output=answer,
        expected_output=expected_output(question),
        retrieval_context=[c.text for c in contexts],
    )
