"""Confirmation runs: majority decides, a tie keeps the baseline, disagreement is unstable."""

from rag_ci.core.results import MetricResult
from rag_ci.judges.majority import decide_by_majority


def verdict(passed, cost=0.01, error=None):
    return MetricResult(
        name="correctness",
        kind="judge",
        score=None if error else float(passed),
        threshold=1.0,
        passed=None if error else passed,
        error=error,
        judge_cost_usd=cost,
        reason=f"run {passed}",
    )


def test_the_majority_overrules_a_noisy_flip_and_is_marked_unstable():
    result = decide_by_majority([verdict(False), verdict(True), verdict(True)], baseline_passed=True)
    assert result.passed is True and result.unstable and result.confirm_runs == [False, True, True]
    assert result.judge_cost_usd == 0.03


def test_a_unanimous_flip_is_a_stable_verdict():
    result = decide_by_majority([verdict(False)] * 3, baseline_passed=True)
    assert result.passed is False and not result.unstable


def test_a_tie_keeps_the_baseline_verdict():
    assert decide_by_majority([verdict(False), verdict(True)], baseline_passed=True).passed is True
    assert decide_by_majority([verdict(True), verdict(False)], baseline_passed=False).passed is False


def test_errored_runs_do_not_vote():
    result = decide_by_majority(
        [verdict(False), verdict(None, error="judge error"), verdict(False)], baseline_passed=True
    )
    assert result.passed is False and result.confirm_runs == [False, False]
