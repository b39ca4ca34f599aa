"""A conversation's turns judged: the same scores as DeepEval's own metric classes on the same turns.

rag-ci judges a turn as DeepEval's LLMTestCase whose input is the conversation so far, then the
last user message (rag_ci.core.questionset.turns.judge_input). Both sides ask the same fake judge
(tests/fakes/judge_servers.py, deterministic policy): DeepEval's stock `OpenAIModel` under
DeepEval's metric classes, and rag-ci's scorer. Equal replies must give equal scores, and the
judge must have been shown the history.
"""

import asyncio
import gc
import json
import warnings

import pytest

from fakes.judge_cases import cases, score_questions
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.core.questionset.conversations import ChatMessage
from rag_ci.core.questionset.questions import TurnQuestion
from rag_ci.core.questionset.turns import judge_input
from rag_ci.judges.build import build_judge
from rag_ci.judges.metrics import expected_output, metric_specs

pytestmark = pytest.mark.filterwarnings(
    "ignore::ResourceWarning"
)  # DeepEval's own clients: see test_judge_fidelity


@pytest.fixture(autouse=True)
def collect_deepevals_unclosed_clients():
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def turns():
    """The second turn of a live conversation per case: asked after the RAG's first answer."""
    items = []
    for i, case in enumerate(cases(3)):
        said = (
            ChatMessage(role="user", content=f"I have a question about unit {i}."),
            ChatMessage(
                role="assistant", content=f"Unit {i} is documented in corpus a. What would you like to know?"
            ),
        )
        turn = TurnQuestion(
            id=f"C{i}#2",
            question=case.question.question,
            reference=case.question.reference,
            doc_id=("a",),
            conversation=f"C{i}",
            turn=2,
            mode="live",
            history=(said[0],),
            said=said,
        )
        answer = case.correct if i != 1 else case.wrong
        items.append((turn, answer, case.contexts))
    return items


def score_with_deepeval(config, base_url):
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    model = OpenAIModel(model="gpt-4.1-mini", base_url=base_url, api_key="sk-fake", temperature=0)
    specs = metric_specs(config.metric_configs())

    async def one(turn, answer, contexts):
        case = LLMTestCase(
            input=judge_input(turn),
            actual_output=answer,
            expected_output=expected_output(turn),
            retrieval_context=[c.text for c in contexts],
        )
        scores = {}
        for name, spec in specs.items():
            if spec.applies_to(turn):
                metric = spec.build(model)
                await metric.a_measure(case, _show_indicator=False)
                scores[name] = metric.score
        return turn.id, scores

    async def go():
        return dict(await asyncio.gather(*(one(*item) for item in turns())))

    return asyncio.run(go())


def test_a_turns_scores_equal_deepevals_own_metric_classes_on_the_turn_with_its_history(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    scorer = build_judge(config, env=FAKE_KEYS)

    async def ours():
        try:
            return await score_questions(scorer, turns())
        finally:
            await scorer.aclose()

    run = asyncio.run(ours())
    asked = json.dumps([entry.body for entry in server.log])
    assert "Conversation so far" in asked and "I have a question about unit 0." in asked
    theirs = score_with_deepeval(config, server.base_url)
    compared = 0
    for record in run.questions:
        assert set(record.metrics) == set(theirs[record.id])
        for name, metric in record.metrics.items():
            assert metric.error is None and metric.score == theirs[record.id][name], (record.id, name)
            compared += 1
    assert compared == 3 * 6
    assert {m.score for q in run.questions for m in q.metrics.values()} >= {0.0, 1.0}


CONVERSATION_METRICS = {
    "knowledge_retention": {"threshold": 0.5},
    "conversation_completeness": {"threshold": 0.5},
}


def test_conversation_level_metrics_score_as_deepevals_own_on_the_conversation(fake_judge):
    from deepeval.models import OpenAIModel
    from deepeval.test_case import ConversationalTestCase, Turn

    server = fake_judge("openai")
    config = judge_config("openai", server, metrics=CONVERSATION_METRICS)
    items = [(turn.model_copy(update={"last": True}), answer, contexts) for turn, answer, contexts in turns()]
    items.append(
        (items[0][0].model_copy(update={"id": "C9#2"}), "I could not find this in the documents.", ())
    )
    first, answer, contexts = turns()[0]
    not_last = (first.model_copy(update={"id": "C7#2"}), answer, contexts)
    scorer = build_judge(config, env=FAKE_KEYS)

    async def ours():
        try:
            return await score_questions(scorer, [*items, not_last])
        finally:
            await scorer.aclose()

    run = asyncio.run(ours()).by_id()
    assert run[not_last[0].id].metrics == {}  # judged at the conversation's last turn only
    model = OpenAIModel(model="gpt-4.1-mini", base_url=server.base_url, api_key="sk-fake", temperature=0)
    specs = metric_specs(config.metric_configs())

    async def theirs(turn, answer):
        case = ConversationalTestCase(
            turns=[
                *(Turn(role=m.role, content=m.content) for m in turn.said),
                Turn(role="user", content=turn.question),
                Turn(role="assistant", content=answer),
            ]
        )
        scores = {}
        for name, spec in specs.items():
            metric = spec.build(model)
            await metric.a_measure(case, _show_indicator=False)
            scores[name] = metric.score
        return scores

    async def all_theirs():
        return [await theirs(turn, answer) for turn, answer, _ in items]

    scores = set()
    for (turn, _, _), expected in zip(items, asyncio.run(all_theirs())):
        got = {name: m.score for name, m in run[turn.id].metrics.items()}
        assert all(m.error is None for m in run[turn.id].metrics.values()), run[turn.id].metrics
        assert got == expected, (turn.id, got, expected)
        scores |= set(got.values())
    assert len(scores) > 1  # a refusal scores apart from an answer: the comparison is not of constants
