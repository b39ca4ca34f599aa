"""Statistics against values computed by hand (scipy is not a dependency)."""

import numpy as np
import pytest

from rag_ci.core.comparison.stats import binom_sf, mcnemar_exact, paired_bootstrap_ci, paired_test


@pytest.mark.parametrize(
    "worse, better, expected",
    [
        (0, 0, 1.0),
        (1, 0, 1.0),  # 2 · P(X <= 0 | 1, ½) = 1
        (10, 0, 2 / 1024),  # 2 · ½¹⁰
        (2, 8, 2 * (1 + 10 + 45) / 1024),  # textbook: 2 · P(X <= 2 | 10, ½) = 0.109375
        (8, 2, 2 * (1 + 10 + 45) / 1024),  # two-sided: symmetric
        (5, 5, 1.0),
    ],
)
def test_exact_mcnemar_matches_the_binomial_on_discordant_pairs(worse, better, expected):
    assert mcnemar_exact(worse, better) == pytest.approx(expected, rel=1e-12)


def test_exact_mcnemar_stays_exact_for_thousands_of_discordant_pairs():
    # 2**n overflows a float for n > 1023; the integer sum must not.
    assert mcnemar_exact(1500, 1500) == 1.0
    assert 0.0 <= mcnemar_exact(1400, 1600) < 0.001


@pytest.mark.parametrize(
    "k, n, p, expected",
    [
        (4, 4, 0.15, 0.15**4),
        (3, 3, 0.5, 0.125),
        (2, 3, 0.5, 0.5),  # 3/8 + 1/8
        (1, 4, 0.15, 1 - 0.85**4),
        (0, 4, 0.3, 1.0),
        (5, 4, 0.3, 0.0),
    ],
)
def test_binomial_upper_tail(k, n, p, expected):
    assert binom_sf(k, n, p) == pytest.approx(expected, rel=1e-9)


def _index_bootstrap(before, after, resamples=20000, seed=1):
    rng = np.random.default_rng(seed)
    b, a = np.asarray(before, float), np.asarray(after, float)
    idx = rng.integers(0, len(b), size=(resamples, len(b)))
    deltas = a[idx].mean(axis=1) - b[idx].mean(axis=1)
    return np.percentile(deltas, [2.5, 97.5])


def test_the_multinomial_bootstrap_agrees_with_resampling_question_indices():
    before = [True] * 80 + [False] * 20
    after = [True] * 70 + [False] * 10 + [True] * 5 + [False] * 15
    low, high = paired_bootstrap_ci(before, after)
    ref_low, ref_high = _index_bootstrap(before, after)
    assert low == pytest.approx(ref_low, abs=0.011) and high == pytest.approx(ref_high, abs=0.011)
    assert low < -0.05 < high


def test_the_bootstrap_is_seeded_so_a_report_renders_the_same_twice():
    before, after = [True, False, True, True] * 10, [False, False, True, True] * 10
    assert paired_bootstrap_ci(before, after) == paired_bootstrap_ci(before, after)


def test_identical_runs_have_a_zero_width_interval_and_p_one():
    outcomes = [True, False, True] * 5
    test = paired_test(outcomes, outcomes)
    assert (test.ci_low, test.ci_high, test.p_value, test.delta) == (0.0, 0.0, 1.0, 0.0)
    assert not test.significant


def test_the_comment_line_reads_like_the_issue_asks():
    before = [True] * 100
    after = [False] * 12 + [True] * 88
    line = paired_test(before, after).describe()
    # 2·½¹² ≈ 0.0005
    assert line.startswith("pass rate −12.0 pp (95 % CI −") and line.endswith(", McNemar p < 0.001)")
    noisy = paired_test([True, False] * 20, [False, True] * 20).describe()
    assert noisy.startswith("pass rate 0.0 pp, not significant (95 % CI ") and noisy.endswith(
        "McNemar p = 1.00)"
    )
