"""Verdict cache keys: exactly what the judge sees, with contexts in their order."""

from builders import question, run
from rag_ci.core.config import MetricConfig
from rag_ci.core.results import Context, MetricResult
from rag_ci.judges.cache import VerdictCache, verdict_cache_key
from rag_ci.judges.metrics import metric_specs

SPECS = metric_specs(
    {
        name: MetricConfig(threshold=0.5)
        for name in (
            "faithfulness",
            "answer_relevancy",
            "contextual_precision",
            "contextual_recall",
            "correctness",
            "completeness",
        )
    }
)
A, B = Context(text="alpha"), Context(text="beta")


def key(name, answer="ans", contexts=(A, B), judge="j1", qhash="q1"):
    return verdict_cache_key(judge, SPECS[name], qhash, answer, contexts)


def test_context_order_changes_the_key_of_context_metrics():
    assert key("contextual_precision", contexts=(A, B)) != key("contextual_precision", contexts=(B, A))
    assert key("faithfulness", contexts=(A, B)) != key("faithfulness", contexts=(B, A))


def test_context_metadata_the_judge_never_sees_does_not_change_the_key():
    tagged = Context(text="alpha", doc_id="a", source="a/x.md#0", score=0.9)
    assert key("contextual_precision", contexts=(tagged, B)) == key("contextual_precision", contexts=(A, B))


def test_the_answer_is_part_of_the_key_only_for_metrics_that_read_it():
    assert key("correctness", answer="x") != key("correctness", answer="y")
    assert key("contextual_recall", answer="x") == key("contextual_recall", answer="y")
    assert key("correctness", contexts=(A,)) == key("correctness", contexts=(B,))


def test_judge_fingerprint_and_question_are_part_of_every_key():
    assert key("faithfulness", judge="j1") != key("faithfulness", judge="j2")
    assert key("faithfulness", qhash="q1") != key("faithfulness", qhash="q2")


def test_the_cache_reuses_error_free_judge_verdicts_of_a_run_at_no_cost():
    good = MetricResult(
        name="faithfulness",
        kind="judge",
        score=0.9,
        threshold=0.7,
        passed=True,
        cache_key="k1",
        judge_cost_usd=0.01,
        confirm_runs=[True, False, True],
        unstable=True,
    )
    bad = MetricResult(name="correctness", kind="judge", error="judge error", cache_key="k2")
    cache = VerdictCache.from_run(run(question("Q1", metrics=[good, bad])))
    assert len(cache) == 1
    hit = cache.reuse("k1")
    assert (
        hit.cached
        and hit.judge_cost_usd == 0.0
        and hit.score == 0.9
        and hit.confirm_runs == []
        and not hit.unstable
    )
    assert cache.reuse("k2") is None
