"""Scoring without reasons, reasons only where read: same scores as DeepEval's own metric classes.

Both sides ask the same fake judge (tests/fakes/judge_servers.py, deterministic policy):
DeepEval's stock `OpenAIModel` under DeepEval's metric classes with their defaults
(`include_reason=True`), and rag-ci's scorer. Equal replies must give equal scores.
"""

import asyncio
import gc
import warnings

import pytest

from fakes.judge_cases import REFUSAL, cases, score_questions
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.core.results import Context
from rag_ci.judges.build import build_judge
from rag_ci.judges.metrics import expected_output, metric_specs

CASES = cases(4)
PARTLY_WRONG = "{correct} It also weighs 99 kg."  # one supported claim, one unsupported: faithfulness 0.5
PADDED = "{correct} By the way, the housing is blue."  # one relevant statement, one padding


# DeepEval 4.3.1's stock OpenAIModel (the side this test compares with) opens an AsyncOpenAI client
# per call and never closes it: third-party, and the reason rag-ci's own provider keeps one client
# and closes it. Their ResourceWarnings are ignored here, during these tests and at the collection
# below, rather than reported against whichever test runs at the next garbage collection.
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(autouse=True)
def collect_deepevals_unclosed_clients():
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def items():
    c0, c1, c2, c3 = CASES
    return [
        (c0.question, c0.correct, c0.contexts),
        (c1.question, c1.wrong, c1.contexts),
        (c2.question, PADDED.format(correct=c2.correct), c2.contexts),
        (c3.question, PARTLY_WRONG.format(correct=c3.correct), tuple(reversed(c3.contexts))),
        (REFUSAL, "I could not find this in the documents.",
         (Context(text="Maintenance: clean the housing with a dry cloth.", doc_id="a", source="a/care.md#0"),)),
    ]


def score_with_ragci(config):
    scorer = build_judge(config, env=FAKE_KEYS)

    async def go():
        try:
            return await score_questions(scorer, items())
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def score_with_deepeval(config, base_url):
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    model = OpenAIModel(model="gpt-4.1-mini", base_url=base_url, api_key="sk-fake", temperature=0)
    specs = metric_specs(config.metric_configs())

    async def one(question, answer, contexts):
        case = LLMTestCase(input=question.question, actual_output=answer, expected_output=expected_output(question),
                           retrieval_context=[c.text for c in contexts])
        scores = {}
        for name, spec in specs.items():
            if spec.applies_to(question):
                metric = spec.build(model)  # DeepEval's class, DeepEval's default include_reason=True
                await metric.a_measure(case, _show_indicator=False)
                scores[name] = (metric.score, metric.reason)
        return question.id, scores

    async def go():
        return dict(await asyncio.gather(*(one(q, a, c) for q, a, c in items())))

    return asyncio.run(go())


def test_scores_equal_deepevals_own_metric_classes_given_the_same_judge_replies(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    ours = score_with_ragci(config)
    theirs = score_with_deepeval(config, server.base_url)
    compared = 0
    for record in ours.questions:
        assert set(record.metrics) == set(theirs[record.id])
        for name, metric in record.metrics.items():
            score, reason = theirs[record.id][name]
            assert metric.error is None and metric.score == score, (record.id, name, metric.score, score)
            if metric.reason is not None:  # the reasons rag-ci writes are DeepEval's, word for word
                assert metric.reason == reason
            compared += 1
    assert compared == 4 * 6 + 3
    scores = {m.score for q in ours.questions for m in q.metrics.values()}
    assert {0.0, 0.5, 1.0} <= scores  # partial scores are part of the comparison, not only 0/1


def test_only_failing_verdicts_ask_the_judge_for_a_reason(fake_judge):
    server = fake_judge("openai")
    result = score_with_ragci(judge_config("openai", server))
    metrics = [m for q in result.questions for m in q.metrics.values()]
    failing = [m for m in metrics if m.passed is False]
    assert failing and all(m.reason for m in failing)
    geval = ("correctness", "completeness")  # GEval writes its reason in its one scoring call, free
    assert all(m.reason is None for m in metrics if m.passed and m.name not in geval)
    reasons_asked = server.kinds().count("reason")
    assert reasons_asked == len([m for m in failing if m.name not in geval])
    scoring_calls = {"faithfulness": 3, "answer_relevancy": 2, "contextual_precision": 1, "contextual_recall": 1,
                     "correctness": 1, "completeness": 1}
    no_claims = 1  # the refusal states no claim: DeepEval asks no faithfulness verdicts for it
    assert server.requests == sum(scoring_calls[m.name] for m in metrics) - no_claims + reasons_asked
