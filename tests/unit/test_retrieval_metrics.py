"""Judge-free metrics against values computed by hand."""

import math

import pytest

from rag_ci.core.config import MetricConfig
from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context
from rag_ci.core.scoring import retrieval_metrics as rm


def ctxs(*sources):
    return [Context(text="t", doc_id="a", source=s) for s in sources]


def test_source_matching_accepts_chunks_of_the_expected_document():
    assert rm.source_matches("a/x.md#3", "a/x.md")
    assert rm.source_matches("a/x.md:3", "a/x.md")
    assert rm.source_matches("a/x.md", "a/x.md")
    assert not rm.source_matches("a/x.md.bak", "a/x.md")
    assert not rm.source_matches(None, "a/x.md")


def test_relevance_counts_each_expected_source_once():
    rel = rm.relevance(ctxs("a/x.md#1", "a/x.md#2", "a/y.md#0", "a/z.md#0"), ["a/x.md", "a/z.md"])
    assert rel.tolist() == [1, 0, 0, 1]


def test_hit_mrr_ndcg_recall_precision_by_hand():
    # expected sources x and z; retrieved: y, x, w, z  -> relevant at ranks 2 and 4
    rel = rm.relevance(ctxs("y", "x", "w", "z"), ["x", "z"])
    assert rm.hit_at_k(rel, 1) == 0.0 and rm.hit_at_k(rel, 2) == 1.0
    assert rm.reciprocal_rank(rel) == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert rm.ndcg_at_k(rel, 5, 2) == pytest.approx(dcg / idcg)
    assert rm.ndcg_at_k(rel, 3, 2) == pytest.approx((1 / math.log2(3)) / idcg)
    assert rm.source_recall_at_k(rel, 3, 2) == 0.5
    assert rm.source_precision_at_k(rel, 4) == 0.5


def test_no_relevant_context_scores_zero():
    rel = rm.relevance(ctxs("y"), ["x"])
    assert (rm.hit_at_k(rel, 5), rm.reciprocal_rank(rel), rm.ndcg_at_k(rel, 5, 1)) == (0.0, 0.0, 0.0)


def test_keyword_coverage_ignores_case_accents_and_spacing():
    assert rm.keyword_coverage("Sent every 10  ms over CAN", ["10 ms", "can", "LIN"]) == pytest.approx(2 / 3)
    assert rm.keyword_coverage("Ansteuerung des AÖ-Winkels", ["ao-winkels"]) == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        "I could not find this in the documents.",
        "This is not in the documents.",
        "The documents do not mention a CEO.",
        "I don't know.",
    ],
)
def test_refusals_are_detected(answer):
    assert rm.is_refusal(answer)


@pytest.mark.parametrize("answer", ["The delay is 10 ms.", "Torque is limited to 400 Nm, not more."])
def test_answers_are_not_refusals(answer):
    assert not rm.is_refusal(answer)


CONFIGS = {
    "hit_at_k": MetricConfig(k=2, threshold=1.0),
    "mrr": MetricConfig(threshold=None),
    "ndcg": MetricConfig(k=5),
    "source_recall": MetricConfig(k=5),
    "keyword_coverage": MetricConfig(threshold=0.6),
    "refusal": MetricConfig(threshold=1.0),
}


def test_score_retrieval_applies_thresholds():
    q = Question(id="A", question="q", doc_id="a", sources=["x"], keywords=["10 ms", "CAN", "LIN"])
    results = rm.score_retrieval(q, "10 ms on CAN", ctxs("y", "w", "x"), CONFIGS)
    assert results["hit_at_k"].score == 0.0 and results["hit_at_k"].passed is False
    assert results["mrr"].score == pytest.approx(1 / 3) and results["mrr"].passed is None
    assert results["keyword_coverage"].passed is True and "missing: LIN" in results["keyword_coverage"].reason
    assert results["refusal"].passed is True


def test_refusal_question_gets_only_the_refusal_metric():
    q = Question(id="O", question="Who is the CEO?", expect="refusal", sources=["x"])
    assert set(rm.score_retrieval(q, "I could not find this in the documents.", ctxs("x"), CONFIGS)) == {
        "refusal"
    }
    answered = rm.score_retrieval(q, "Our CEO is Jane.", ctxs("x"), CONFIGS)
    assert (
        answered["refusal"].passed is False
        and answered["refusal"].reason == "answered an out-of-scope question"
    )


def test_in_scope_question_that_is_refused_fails():
    q = Question(id="A", question="q", doc_id="a")
    assert (
        rm.score_retrieval(q, "I could not find this in the documents.", [], CONFIGS)["refusal"].passed
        is False
    )


def test_metrics_without_inputs_do_not_apply():
    q = Question(id="A", question="q", doc_id="a")
    assert set(rm.score_retrieval(q, "answer", ctxs("x"), CONFIGS)) == {"refusal"}
