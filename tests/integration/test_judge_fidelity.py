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
from rag_ci.core.results import Context, MetricResult
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
        (
            REFUSAL,
            "I could not find this in the documents.",
            (
                Context(
                    text="Maintenance: clean the housing with a dry cloth.", doc_id="a", source="a/care.md#0"
                ),
            ),
        ),
    ]


def baseline_items():
    """Every question answered right: the baseline the scripted items regress from."""
    return [(c.question, c.correct, c.contexts) for c in CASES] + [items()[-1]]


def score_with_ragci(config, baseline=None, batch=None):
    scorer = build_judge(config, env=FAKE_KEYS, baseline=baseline)

    async def go():
        try:
            return await score_questions(scorer, batch or items(), baseline)
        finally:
            await scorer.aclose()

    return asyncio.run(go())


def score_with_deepeval(config, base_url):
    from deepeval.models import OpenAIModel
    from deepeval.test_case import LLMTestCase

    model = OpenAIModel(model="gpt-4.1-mini", base_url=base_url, api_key="sk-fake", temperature=0)
    specs = metric_specs(config.metric_configs())

    async def one(question, answer, contexts):
        case = LLMTestCase(
            input=question.question,
            actual_output=answer,
            expected_output=expected_output(question),
            retrieval_context=[c.text for c in contexts],
        )
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
    baseline = score_with_ragci(config, batch=baseline_items())
    # without, with a baseline
    cold, ours = (
        score_with_ragci(config),
        score_with_ragci(config, baseline=baseline),
    )
    theirs = score_with_deepeval(config, server.base_url)
    compared = reasons = 0
    for run in (cold, ours):
        for record in run.questions:
            assert set(record.metrics) == set(theirs[record.id])
            for name, metric in record.metrics.items():
                score, reason = theirs[record.id][name]
                assert metric.error is None and metric.score == score, (record.id, name, metric.score, score)
                if metric.reason is not None:  # the reasons rag-ci writes are DeepEval's, word for word
                    assert metric.reason == reason
                    reasons += metric.name not in ("correctness", "completeness")
                compared += 1
    assert compared == 2 * (4 * 6 + 3)
    # A question gets one reason: each metric's own reasons are compared in a run of
    # that metric alone, so the faithfulness, relevancy... reasons are compared, not only GEval's.
    for name in ("faithfulness", "answer_relevancy", "contextual_precision", "contextual_recall"):
        single = judge_config("openai", server, metrics={name: {"threshold": 0.7}})
        alone = score_with_ragci(single, baseline=score_with_ragci(single, batch=baseline_items()))
        for record in alone.questions:
            metric = record.metrics.get(name)
            if metric is not None and metric.reason is not None:
                assert (metric.score, metric.reason) == theirs[record.id][name]
                reasons += 1
    assert reasons >= 3
    scores = {m.score for q in ours.questions for m in q.metrics.values()}
    assert {0.0, 0.5, 1.0} <= scores  # partial scores are part of the comparison, not only 0/1


GEVAL = ("correctness", "completeness")  # GEval writes its reason in its one scoring call, free
SCORING_CALLS = {
    "faithfulness": 3,
    "answer_relevancy": 2,
    "contextual_precision": 1,
    "contextual_recall": 1,
    "correctness": 1,
    "completeness": 1,
}
NO_CLAIMS = 1  # the refusal states no claim: DeepEval asks no faithfulness verdicts for it


def test_a_run_without_baseline_asks_no_reason_and_keeps_the_failing_measurements_replies(fake_judge):
    # Its report prints failing metrics' names and scores, never their reasons (docs/performance.md).
    server = fake_judge("openai")
    result = score_with_ragci(judge_config("openai", server))
    metrics = [m for q in result.questions for m in q.metrics.values()]
    failing = [m for m in metrics if m.passed is False and m.name not in GEVAL]
    assert failing and all(m.reason is None for m in failing)
    assert server.kinds().count("reason") == 0
    assert server.requests == sum(SCORING_CALLS[m.name] for m in metrics) - NO_CLAIMS
    # Every reply of a failing measurement is kept, so the run that prints it can ask its reason for one call.
    faithfulness = [m for m in failing if m.name == "faithfulness"]
    assert faithfulness and all(len(m.judge_replies) == 3 for m in faithfulness)  # truths, claims, verdicts


def test_only_the_failing_verdicts_a_comparison_prints_ask_the_judge_for_a_reason(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline = score_with_ragci(
        config,
        batch=[(c.question, c.correct, c.contexts) for c in CASES[:2]]
        + [(CASES[2].question, CASES[2].wrong, CASES[2].contexts)],
    )
    server.reset()
    c0, c1, c2, _ = CASES
    head = score_with_ragci(
        config,
        baseline=baseline,
        batch=[
            (c0.question, c0.correct, c0.contexts),  # passes as before: cached, nothing to explain
            (c1.question, c1.wrong, c1.contexts),  # a regression: its failing verdicts' reasons are printed
            # failing as before, reworded: printed nowhere
            (
                c2.question,
                c2.wrong + " That is all.",
                c2.contexts,
            ),
        ],
    )
    by_id = head.by_id()
    regressed = [m for m in by_id[c1.question.id].metrics.values() if m.passed is False]
    still_failing = [
        m for m in by_id[c2.question.id].metrics.values() if m.passed is False and m.name not in GEVAL
    ]
    assert still_failing and all(m.reason is None for m in still_failing)
    # One reason says why the regression fails: GEval's verdict carries its own, so none is asked
    # (reasons once per question).
    assert any(m.reason for m in regressed if m.name in GEVAL)
    assert all(m.reason is None for m in regressed if m.name not in GEVAL)
    assert server.kinds().count("reason") == 0


def test_a_regression_without_a_failing_geval_verdict_asks_one_reason(fake_judge):
    server = fake_judge("openai")
    metrics = {"faithfulness": {"threshold": 0.7}, "contextual_recall": {"threshold": 0.7}}
    config = judge_config("openai", server, metrics=metrics)
    c1 = CASES[1]
    baseline = score_with_ragci(config, batch=[(c1.question, c1.correct, c1.contexts)])
    server.reset()
    unrelated = (Context(text="The weather in Lisbon is mild in spring.", doc_id="a", source="a/w.md"),)
    head = score_with_ragci(config, baseline=baseline, batch=[(c1.question, c1.wrong, unrelated)])
    failing = [m for m in head.questions[0].metrics.values() if m.passed is False]
    assert len(failing) == 2  # both metrics regressed
    assert [m.name for m in failing if m.reason] == [failing[0].name]  # the first says why, once
    assert server.kinds().count("reason") == 1


def test_a_worse_question_gets_the_reason_of_its_cached_failing_verdict_for_one_call_each(fake_judge):
    # Main's run printed no reason (no baseline) but kept the replies; in a PR the same answer is
    # reused from the verdict cache, and the question is worse because its retrieval got worse:
    # the comparison prints the failing verdicts' reasons, replayed from those replies.
    server = fake_judge("openai")
    # No GEval metric: a failing GEval verdict carries its reason already, and none would be asked.
    config = judge_config(
        "openai",
        server,
        metrics={
            "faithfulness": {"threshold": 0.7},
            "answer_relevancy": {"threshold": 0.7},
            "contextual_recall": {"threshold": 0.7},
        },
    )
    c1 = CASES[1]
    main = score_with_ragci(config, batch=[(c1.question, c1.wrong, c1.contexts)])
    hit = MetricResult(name="hit_at_k", kind="retrieval", score=1.0, threshold=1.0, passed=True)
    old = main.questions[0].model_copy(update={"metrics": {**main.questions[0].metrics, "hit_at_k": hit}})
    main = main.model_copy(update={"questions": [old]})
    assert not old.passed and all(
        m.reason is None for m in old.metrics.values() if m.passed is False and m.name not in GEVAL
    )
    scorer = build_judge(config, env=FAKE_KEYS, baseline=main)
    server.reset()

    async def go():
        try:
            metrics = await scorer.score(c1.question, c1.wrong, list(c1.contexts), old)
            lost = hit.model_copy(update={"score": 0.0, "passed": False})
            record = old.model_copy(update={"metrics": {**metrics, "hit_at_k": lost}})
            return await scorer.explain(record, old)
        finally:
            await scorer.aclose()

    record = asyncio.run(go())
    judged = [m for m in record.metrics.values() if m.kind == "judge"]
    assert judged and all(m.cached for m in judged)
    explained = [m for m in judged if m.passed is False and m.reason]
    assert len(explained) == 1  # one reason per question
    assert server.requests == server.kinds().count("reason") == 1  # one call, nothing re-judged
    theirs = score_with_deepeval(config, server.base_url)[c1.question.id]
    assert all(m.reason == theirs[m.name][1] and m.score == theirs[m.name][0] for m in explained)
