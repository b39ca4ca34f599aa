"""Latency and cost budgets (docs/gate.md): a quality gain may still cost too much.

A budget is absolute (`latency_p95: 2.5` seconds, `cost_per_question_usd: 0.002`) or
relative to the baseline (`latency_p95: "+20%"`). A relative budget without a baseline
value to compare with is reported as unchecked, never as a breach.

Latency is noisy (a cold first batch, a busy runner): a latency percentile above its
limit breaches only when it is above it with confidence 1 − gate.alpha, by a seeded
bootstrap (docs/noise.md#4-budgets): for a relative budget, the one-sided lower bound
of the ratio now/baseline of the percentile, resampling the questions both runs timed
(paired); for an absolute one, the lower bound of this run's percentile. A percentile
over its limit whose bound is not is shown as "within noise", and does not gate.
Costs are counted, not sampled: their budgets compare the values as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from rag_ci.core.comparison.stats import paired_percentile_ratio_lower_bound, percentile_lower_bound
from rag_ci.core.results import QuestionResult, RunResult

_RELATIVE = re.compile(r"^\+?(\d+(?:\.\d+)?)\s*%$")
UNITS = {"latency_p50": "s", "latency_p95": "s", "cost_per_question_usd": "usd", "judge_cost_usd": "usd"}
PERCENTILES = {"latency_p50": 50.0, "latency_p95": 95.0}


@dataclass(frozen=True)
class BudgetCheck:
    name: str
    limit: str  # as configured: "+20%" or "0.002"
    baseline: float | None
    value: float | None
    allowed: float | None  # the limit in the measure's unit; None when it cannot be checked
    # Latency: the value this run is above with confidence 1 − alpha (module docstring), in
    # the measure's unit; None for costs (no sampling noise) or with nothing to resample.
    bound: float | None = None

    @property
    def over(self) -> bool:
        """The value as measured is above the limit."""
        return self.allowed is not None and self.value is not None and self.value > self.allowed + 1e-12

    @property
    def breached(self) -> bool:
        return (
            self.over
            and self.allowed is not None
            and (self.bound is None or self.bound > self.allowed + 1e-12)
        )

    @property
    def within_noise(self) -> bool:
        """Above the limit as measured, but not with confidence: not a breach."""
        return self.over and not self.breached

    @property
    def unit(self) -> str:
        return UNITS.get(self.name, "")


def run_measures(run: RunResult) -> dict[str, float | None]:
    """The budgeted quantities of one run."""
    agg, records = run.aggregates, run.questions
    n = agg.overall.n
    return {
        "latency_p50": agg.latency_p50_s,
        "latency_p95": agg.latency_p95_s,
        # Per question as the RAG answers it: re-asks of flipped questions are not counted,
        # so noise control never breaches a cost budget on its own.
        "cost_per_question_usd": agg.generator_cost_usd / n if n else None,
        # What the judge cost this run, re-asks included: that is the bill.
        "judge_cost_usd": sum(r.all_samples_judge_cost_usd for r in records),
    }


def timed(records: list[QuestionResult]) -> dict[str, float]:
    """Each question's latency as the run's percentiles count it (errors left out)."""
    return {r.id: r.latency_s for r in records if r.latency_s is not None and r.verdict != "error"}


def latency_bound(name: str, relative: bool, base: RunResult, head: RunResult, alpha: float) -> float | None:
    """The latency percentile this run is above with confidence 1 − alpha, or None."""
    q = PERCENTILES[name]
    now, before, baseline = timed(head.questions), timed(base.questions), run_measures(base)[name]
    if not relative:
        return percentile_lower_bound(list(now.values()), q, alpha=alpha)
    paired = [i for i in now if i in before]
    ratio = paired_percentile_ratio_lower_bound(
        [before[i] for i in paired], [now[i] for i in paired], q, alpha=alpha
    )
    return None if ratio is None or not baseline else ratio * baseline


def check_budgets(
    budgets: Mapping[str, float | str | None], base: RunResult, head: RunResult, *, alpha: float = 0.05
) -> tuple[BudgetCheck, ...]:
    if not any(limit is not None for limit in budgets.values()):
        return ()  # measuring two runs is a pass over every question of each
    before, now = run_measures(base), run_measures(head)
    checks = []
    for name, limit in budgets.items():
        if limit is None:
            continue
        match = _RELATIVE.match(limit) if isinstance(limit, str) else None
        if match:
            old = before.get(name)
            allowed = old * (1 + float(match.group(1)) / 100) if old else None
        else:
            old, allowed = before.get(name), float(limit)
        shown = limit if isinstance(limit, str) else format(float(limit), "f").rstrip("0").rstrip(".")
        check = BudgetCheck(name=name, limit=shown, baseline=old, value=now.get(name), allowed=allowed)
        if name in PERCENTILES and check.over:  # the bootstrap only where it can change the outcome
            check = replace(check, bound=latency_bound(name, bool(match), base, head, alpha))
        checks.append(check)
    return tuple(checks)


RISE_CHECKED = 0.20  # a percentile this much above the baseline's is checked against noise (the report's ⚠️)
# Above this many timed questions a percentile is stable and the bootstrap (2,000 resamples of n)
# costs seconds: a rise is taken as measured.
RISE_BOUND_MAX_QUESTIONS = 5_000


def latency_rise_bounds(base: RunResult, head: RunResult, alpha: float) -> dict[str, float | None]:
    """For each latency percentile more than RISE_CHECKED above the baseline's: the value this run
    is above with confidence 1 − alpha, paired like a relative budget. A rise whose bound is not
    above that share of the baseline is timing noise (a loaded runner; p95 of 42 questions is the
    second-largest value), so the report says nothing of it: the floor scales with the baseline."""
    if len(head.questions) > RISE_BOUND_MAX_QUESTIONS:
        return {}
    before, now = run_measures(base), run_measures(head)
    rose = [
        name
        for name in PERCENTILES
        if (was := before[name]) and (is_now := now[name]) and is_now > was * (1 + RISE_CHECKED)
    ]
    return {name: latency_bound(name, True, base, head, alpha) for name in rose}
