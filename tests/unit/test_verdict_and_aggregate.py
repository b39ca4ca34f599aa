"""Question verdicts, failure stages, and the aggregates of a run."""

import pytest

from builders import metric, question
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.core.scoring.verdict import failure_stage, question_verdict


def test_verdict_precedence():
    ok = {"m": metric("m", 1.0)}
    assert question_verdict("crash", ["b"], ok) == "error"
    assert question_verdict(None, ["b"], ok) == "routing_error"
    assert question_verdict(None, [], {"m": metric("m", 0.0)}) == "fail"
    assert question_verdict(None, [], {**ok, "info": metric("info", 0.0, threshold=None)}) == "pass"


def test_metric_error_makes_the_question_an_error():
    broken = metric("faithfulness", 0.0, kind="judge")
    broken.error, broken.passed = "judge returned invalid JSON", None
    assert question_verdict(None, [], {"faithfulness": broken}) == "error"


@pytest.mark.parametrize(
    "hit, answer_ok, stage",
    [(0.0, 1.0, "retrieval"), (1.0, 0.0, "generation"), (0.0, 0.0, "both"), (1.0, 1.0, None)],
)
def test_failure_stage_crosses_retrieval_with_answer(hit, answer_ok, stage):
    metrics = {
        "hit_at_k": metric("hit_at_k", hit, 1.0),
        "correctness": metric("correctness", answer_ok, 1.0, kind="judge"),
    }
    assert failure_stage(metrics) == stage


def test_failure_stage_uses_contextual_recall_without_sources():
    metrics = {
        "contextual_recall": metric("contextual_recall", 0.2, 0.7, "judge"),
        "correctness": metric("correctness", 1.0, 1.0, "judge"),
    }
    assert failure_stage(metrics) == "retrieval"


def test_aggregates_per_corpus_tag_metric_latency_and_cost():
    records = [
        question("A", corpora=["a"], tags=["x"], latency=0.1, cost=0.5, metrics=[metric("m", 1.0)]),
        question(
            "B", "fail", corpora=["a", "b"], tags=["x"], latency=0.3, cost=0.25, metrics=[metric("m", 0.0)]
        ),
        question("C", "error", corpora=["b"], latency=9.0),
    ]
    agg = aggregate(records)
    assert (agg.overall.n, agg.overall.passed, agg.overall.failed, agg.overall.errors) == (3, 1, 1, 1)
    assert agg.per_corpus["a"].pass_rate == 0.5 and agg.per_corpus["b"].n == 2
    assert agg.per_tag["x"].n == 2
    assert agg.per_metric["m"].mean == 0.5 and agg.per_metric["m"].failed == 1
    assert agg.latency_p50_s == pytest.approx(0.2)  # errors excluded from latency
    assert agg.generator_cost_usd == pytest.approx(0.75)
