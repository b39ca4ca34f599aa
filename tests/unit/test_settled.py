"""rag_ci.core.scoring.settled: which answers are regressions before any judge call."""

from builders import metric, question
from rag_ci.core.results import GatePolicy
from rag_ci.core.scoring.settled import regressed_without_judge, settling_metrics

KW = "keyword_coverage"


def policy(**metrics):
    return GatePolicy(gate={}, metrics=metrics, judge={})


def test_only_judge_free_metrics_defined_alike_in_both_runs_settle():
    now = policy(
        keyword_coverage={"threshold": 0.6},
        hit_at_k={"threshold": 1.0, "k": 3},
        correctness={"threshold": 0.5},
    )
    base = policy(
        keyword_coverage={"threshold": 0.6},
        hit_at_k={"threshold": 1.0, "k": 5},
        correctness={"threshold": 0.5},
    )
    assert settling_metrics(now, base) == {KW}  # hit@3 is not the baseline's hit@5; correctness is judged
    assert settling_metrics(now, None) == frozenset()  # a baseline that recorded no policy


def test_a_drop_of_a_settling_metric_on_the_same_question_settles_it():
    base = question("Q1", metrics=[metric(KW, 1.0, 0.6)])
    dropped = {KW: metric(KW, 0.0, 0.6)}
    assert regressed_without_judge(dropped, base, base.question_hash, frozenset({KW}))
    assert not regressed_without_judge(dropped, base, base.question_hash, frozenset())  # defined differently
    # a changed question never regresses
    assert not regressed_without_judge(dropped, base, "edited", frozenset({KW}))
    assert not regressed_without_judge(dropped, None, base.question_hash, frozenset({KW}))


def test_a_metric_that_failed_on_the_baseline_too_settles_nothing():
    base = question("Q1", "fail", metrics=[metric(KW, 0.0, 0.6)])
    assert not regressed_without_judge({KW: metric(KW, 0.0, 0.6)}, base, base.question_hash, frozenset({KW}))
    assert not regressed_without_judge({KW: metric(KW, 1.0, 0.6)}, base, base.question_hash, frozenset({KW}))
