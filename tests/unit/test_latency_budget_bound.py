"""Latency budgets decided with a confidence bound (rag_ci/core/comparison/budgets.py):
a percentile over its limit breaches only when its bootstrap lower bound is over it too."""

from __future__ import annotations

import numpy as np
import pytest

from builders import question, run
from rag_ci.core.comparison.budgets import check_budgets
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.stats import paired_percentile_ratio_lower_bound, percentile_lower_bound
from rag_ci.core.config import GateConfig
from rag_ci.core.reporting.render import render_markdown


def _run(latencies):
    return run(*(question(f"Q{i:02d}", latency=float(x)) for i, x in enumerate(latencies)))


def _noisy(seed: int, n: int = 30, factor: float = 1.0) -> np.ndarray:
    typical = np.random.default_rng(0).lognormal(0, 0.5, n) * 0.2  # each question's own time, both runs
    return typical * np.random.default_rng(seed).lognormal(0, 0.25, n) * factor


def test_a_p95_over_its_limit_by_two_slow_answers_is_within_noise_and_does_not_gate():
    base = _run([0.2] * 28 + [0.25, 0.25])
    head = _run([0.2] * 28 + [0.5, 0.6])  # two answers slow: p95 rises 0.23 -> 0.37 s, 1.6×
    gate = GateConfig.model_validate({"budgets": {"latency_p95": "+20%"}})
    result = compare(base, head, gate=gate)
    (check,) = result.budgets
    assert check.over and not check.breached and check.within_noise
    assert check.bound < check.allowed
    assert result.verdict == "pass"
    assert "✅ within noise (lower bound" in render_markdown(head, result)


def test_a_2x_slowdown_on_every_question_breaches_with_its_bound_over_the_limit():
    base, head = _run(_noisy(1)), _run(_noisy(2, factor=2))
    gate = GateConfig.model_validate({"budgets": {"latency_p95": "+20%", "latency_p50": "+20%"}})
    result = compare(base, head, gate=gate)
    assert all(b.breached and b.bound > b.allowed for b in result.budgets)
    assert result.verdict == "fail"
    text = render_markdown(head, result)
    assert text.startswith("## rag-ci: ❌ 2 budgets exceeded") and "❌ over budget" in text


@pytest.mark.parametrize("seed", range(1, 11))
def test_unchanged_noisy_reruns_never_breach(seed):
    """Under the point-estimate rule (before the confidence bound), re-runs 6, 8 and 9 breached this baseline."""
    base, head = _run(_noisy(103)), _run(_noisy(seed))
    checks = check_budgets({"latency_p95": "+20%", "latency_p50": "+20%"}, base, head)
    assert not any(c.breached for c in checks), checks


def test_an_absolute_latency_budget_needs_the_run_to_be_over_it_with_confidence():
    base = _run([0.1] * 30)
    barely = _run([0.9] * 27 + [1.3, 1.4, 1.5])  # p95 1.36 s > 1.2 s, from three answers
    clearly = _run([1.5] * 30)
    (within,) = check_budgets({"latency_p95": 1.2}, base, barely)
    (over,) = check_budgets({"latency_p95": 1.2}, base, clearly)
    assert within.within_noise and not within.breached
    assert over.breached and over.bound == pytest.approx(1.5)


def test_cost_budgets_are_counted_not_sampled():
    base = run(question("A", cost=0.001), question("B", cost=0.001))
    head = run(question("A", cost=0.0013), question("B", cost=0.0013))
    (check,) = check_budgets({"cost_per_question_usd": "+20%"}, base, head)
    assert check.breached and check.bound is None


def test_errored_questions_are_left_out_of_the_resampled_latencies_like_the_percentiles():
    base = _run([0.2] * 20)
    head = run(
        *(question(f"Q{i:02d}", latency=0.5) for i in range(19)), question("Q19", "error", latency=30.0)
    )
    (check,) = check_budgets({"latency_p95": "+20%"}, base, head)
    assert check.value == pytest.approx(0.5) and check.bound == pytest.approx(0.5)


def test_the_bounds_are_seeded_the_same_runs_give_the_same_bound():
    before, after = _noisy(3), _noisy(4, factor=1.5)
    assert paired_percentile_ratio_lower_bound(before, after, 95) == paired_percentile_ratio_lower_bound(
        before, after, 95
    )
    assert percentile_lower_bound(after, 50) == percentile_lower_bound(after, 50)
    assert percentile_lower_bound([], 95) is None and paired_percentile_ratio_lower_bound([], [], 95) is None
    with pytest.raises(ValueError):
        paired_percentile_ratio_lower_bound([1.0], [1.0, 2.0], 95)
