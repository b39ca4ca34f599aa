"""Statistics for paired pass/fail outcomes: exact McNemar, paired bootstrap, binomial tail.

Pure and deterministic: the bootstrap is seeded, so the same two runs always give the
same confidence interval (a report that changes when re-rendered is not trusted).
Exact arithmetic where it is cheap (McNemar sums integers), logs where it is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SEED = 20240517
BOOTSTRAP_RESAMPLES = 10_000


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): the one-sided binomial test's p-value."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k, n + 1):
        log_comb = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        total += math.exp(log_comb + i * log_p + (n - i) * log_q)
    return min(1.0, total)


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs.

    `worse` = pairs that passed before and fail now, `better` = the reverse. Under the
    null both directions are equally likely, so the smaller count is Binomial(b + c, ½):
    p = min(1, 2·P(X <= min(b, c))). Concordant pairs carry no information.
    """
    if worse < 0 or better < 0:
        raise ValueError("counts must be >= 0")
    n = worse + better
    if n == 0:
        return 1.0
    low = min(worse, better)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, float(2 * tail / 2**n))  # int / int: exact up to the final rounding, no overflow


def paired_bootstrap_ci(
    before: Sequence[bool],
    after: Sequence[bool],
    *,
    level: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile CI of mean(after) − mean(before), resampling the *pairs* (questions).

    A pair's difference is −1, 0 or +1, so resampling n pairs with replacement is a draw
    from Multinomial(n, observed shares of the three): the same distribution as the
    index-resampling bootstrap, at O(resamples) cost instead of O(resamples · n).
    """
    if len(before) != len(after):
        raise ValueError("paired samples must have the same length")
    n = len(before)
    if n == 0:
        return (0.0, 0.0)
    down = sum(1 for b, a in zip(before, after) if b and not a)
    up = sum(1 for b, a in zip(before, after) if a and not b)
    shares = [down / n, up / n, (n - down - up) / n]
    draws = np.random.default_rng(seed).multinomial(n, shares, size=resamples)
    deltas = (draws[:, 1] - draws[:, 0]) / n
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(deltas, [tail, 100 - tail])
    return (float(low), float(high))


@dataclass(frozen=True)
class PairedTest:
    """A pass-rate change on the same questions, with its uncertainty."""

    n: int  # paired questions
    before: float  # pass rate on the baseline
    after: float  # pass rate now
    worse: int  # pass -> fail pairs
    better: int  # fail -> pass pairs
    ci_low: float
    ci_high: float
    p_value: float
    alpha: float = 0.05

    @property
    def delta(self) -> float:
        return self.after - self.before

    @property
    def significant(self) -> bool:
        return self.n > 0 and self.p_value < self.alpha

    @property
    def significant_drop(self) -> bool:
        return self.significant and self.delta < 0

    def describe(self, label: str = "pass rate") -> str:
        """`pass rate −4.0 pp (95 % CI −7.1 … −1.2, McNemar p = 0.01)` or `… not significant`."""
        change = f"{label} {format_pp(self.delta)} pp"
        p = format_p(self.p_value)
        evidence = f"95 % CI {format_pp(self.ci_low)} … {format_pp(self.ci_high)}, McNemar p {p if p.startswith('<') else '= ' + p}"
        return f"{change} ({evidence})" if self.significant else f"{change}, not significant ({evidence})"


def paired_test(before: Sequence[bool], after: Sequence[bool], *, alpha: float = 0.05) -> PairedTest:
    n = len(before)
    worse = sum(1 for b, a in zip(before, after) if b and not a)
    better = sum(1 for b, a in zip(before, after) if a and not b)
    low, high = paired_bootstrap_ci(before, after)
    return PairedTest(
        n=n,
        before=sum(before) / n if n else 0.0,
        after=sum(after) / n if n else 0.0,
        worse=worse,
        better=better,
        ci_low=low,
        ci_high=high,
        p_value=mcnemar_exact(worse, better),
        alpha=alpha,
    )


def format_pp(share: float) -> str:
    # A true minus sign: the report is read by humans, and "-0.0" reads as noise.
    value = round(share * 100, 1)
    if value == 0:
        return "0.0"
    return f"{'+' if value > 0 else '−'}{abs(value):.1f}"


def format_p(p: float) -> str:
    # Three decimals below 0.1, so a p-value just under alpha never prints as alpha itself.
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p < 0.1 else f"{p:.2f}"


# Latency budgets: the percentile of every resample is computed over all n values, so
# fewer resamples than for pass rates, in blocks that bound the memory (n × block floats).
PERCENTILE_RESAMPLES = 2_000
_BLOCK = 250


def _resampled_percentiles(
    columns: Sequence[Sequence[float]], q: float, resamples: int, seed: int
) -> list[np.ndarray]:
    """For each column (same length n: paired), its q-th percentile over `resamples`
    resamplings of the n rows with replacement (the same rows for every column)."""
    data = [np.asarray(c, dtype=float) for c in columns]
    n = len(data[0])
    rng = np.random.default_rng(seed)
    out: list[list[np.ndarray]] = [[] for _ in data]
    for start in range(0, resamples, _BLOCK):
        rows = rng.integers(0, n, size=(min(_BLOCK, resamples - start), n))
        for i, column in enumerate(data):
            out[i].append(np.percentile(column[rows], q, axis=1))
    return [np.concatenate(parts) for parts in out]


def percentile_lower_bound(
    values: Sequence[float],
    q: float,
    *,
    alpha: float = 0.05,
    resamples: int = PERCENTILE_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> float | None:
    """One-sided (1 − alpha) lower confidence bound of the q-th percentile, seeded bootstrap."""
    if not len(values):
        return None
    (draws,) = _resampled_percentiles([values], q, resamples, seed)
    return float(np.quantile(draws, alpha))


def paired_percentile_ratio_lower_bound(
    before: Sequence[float],
    after: Sequence[float],
    q: float,
    *,
    alpha: float = 0.05,
    resamples: int = PERCENTILE_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> float | None:
    """One-sided (1 − alpha) lower confidence bound of percentile(after) / percentile(before),
    resampling the pairs (the same questions on both runs), seeded. None without pairs."""
    if len(before) != len(after):
        raise ValueError("paired samples must have the same length")
    if not len(before):
        return None
    old, new = _resampled_percentiles([before, after], q, resamples, seed)
    ratios = np.divide(new, old, out=np.full_like(new, np.inf), where=old > 0)
    return float(np.quantile(ratios, alpha))
