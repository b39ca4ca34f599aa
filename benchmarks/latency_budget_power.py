"""`python -m benchmarks.latency_budget_power`: what a relative latency budget can detect.

Simulates pairs of runs of one question set and applies the budget rule of
rag_ci/core/comparison/budgets.py (over the limit as measured *and* the bootstrap lower
bound of the percentile ratio over it too) to each pair:

* each question has its own typical latency (lognormal around 1, σ = 0.5: short and long
  questions), the same in both runs (the pairing);
* each answer varies around it by a per-run noise (lognormal, σ = --noise);
* the head run is `slowdown` times slower on every question.

Prints, per number of questions, the share of unchanged pairs that breach (false alarms)
and the share of slowed-down pairs that breach (detection), for p50 and p95, at "+20%".
Warm-ups are assumed (no cold batch): the cold start is the warm-up's job, not the
statistics'. docs/noise.md#4-budgets quotes one run's table.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from rag_ci.core.comparison.stats import paired_percentile_ratio_lower_bound


def breaches(
    before: np.ndarray, after: np.ndarray, q: float, allowed_ratio: float, alpha: float, naive: bool = False
) -> bool:
    over = np.percentile(after, q) > allowed_ratio * np.percentile(before, q)
    if naive:  # the older rule: the point estimate alone
        return bool(over)
    return bool(over and paired_percentile_ratio_lower_bound(before, after, q, alpha=alpha) > allowed_ratio)


def rate(
    n: int,
    slowdown: float,
    q: float,
    *,
    noise: float,
    trials: int,
    allowed_ratio: float,
    alpha: float,
    seed: int,
    naive: bool = False,
) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        typical = rng.lognormal(0, 0.5, n)
        before = typical * rng.lognormal(0, noise, n)
        after = typical * rng.lognormal(0, noise, n) * slowdown
        hits += breaches(before, after, q, allowed_ratio, alpha, naive)
    return hits / trials


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noise", type=float, default=0.25, help="σ of the per-answer lognormal noise")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--sizes", default="20,30,50,100,200")
    parser.add_argument("--slowdowns", default="1.0,1.2,1.5,2.0,3.0")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument(
        "--naive", action="store_true", help="the point-estimate rule (before the bootstrap), for comparison"
    )
    args = parser.parse_args(argv)
    slowdowns = [float(x) for x in args.slowdowns.split(",")]
    print(
        f"{'naive rule' if args.naive else 'bootstrap rule'}: budget +20%, alpha {args.alpha}, noise σ {args.noise}, {args.trials} simulated pairs per cell: "
        "share of pairs that breach"
    )
    print("| questions | percentile | " + " | ".join(f"{s:g}×" for s in slowdowns) + " |")
    print("|---:|---|" + "---:|" * len(slowdowns))
    for n in (int(x) for x in args.sizes.split(",")):
        for q in (50.0, 95.0):
            cells = [
                rate(
                    n,
                    s,
                    q,
                    noise=args.noise,
                    trials=args.trials,
                    allowed_ratio=1.2,
                    alpha=args.alpha,
                    seed=n,
                    naive=args.naive,
                )
                for s in slowdowns
            ]
            print(f"| {n} | p{q:.0f} | " + " | ".join(f"{c:.0%}" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
