"""Latency and cost budgets (DESIGN §7.4): a quality gain may still cost too much.

A budget is absolute (`latency_p95: 2.5` seconds, `cost_per_question_usd: 0.002`) or
relative to the baseline (`latency_p95: "+20%"`). A relative budget without a baseline
value to compare with is reported as unchecked, never as a breach.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rag_ci.core.scoring.results import RunResult

_RELATIVE = re.compile(r"^\+?(\d+(?:\.\d+)?)\s*%$")
UNITS = {"latency_p50": "s", "latency_p95": "s", "cost_per_question_usd": "usd", "judge_cost_usd": "usd"}


@dataclass(frozen=True)
class BudgetCheck:
    name: str
    limit: str  # as configured: "+20%" or "0.002"
    baseline: float | None
    value: float | None
    allowed: float | None  # the limit in the measure's unit; None when it cannot be checked

    @property
    def breached(self) -> bool:
        return self.allowed is not None and self.value is not None and self.value > self.allowed + 1e-12

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


def check_budgets(budgets: Mapping[str, float | str | None], base: RunResult, head: RunResult) -> tuple[BudgetCheck, ...]:
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
        checks.append(BudgetCheck(name=name, limit=shown, baseline=old, value=now.get(name), allowed=allowed))
    return tuple(checks)
