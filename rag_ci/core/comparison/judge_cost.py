"""Judge cost, like with like. A pull request's run reuses the baseline's verdicts wherever the
answer and contexts did not change (docs/noise.md, verdict cache), so its judge cost is the cost
of the few verdicts judged afresh, while the baseline's is usually a full run: "judge cost −85 %"
would compare a full bill with a partial one. Compared instead: what the verdicts this run judged
cost on both runs, and, apart, how many verdicts the cache gave and what the baseline paid for
them (the calls not made). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from rag_ci.core.results import RunResult


@dataclass(frozen=True)
class JudgeCost:
    judged: int  # verdicts this run asked the judge for
    reused: int  # verdicts this run took from the cache
    judged_old_usd: float  # what the baseline paid for the verdicts this run judged
    judged_new_usd: float  # what this run paid for them
    reused_old_usd: float  # what the baseline paid for the verdicts this run reused: the calls not made


def judge_cost(base: RunResult, head: RunResult) -> JudgeCost | None:
    """The judged metrics of the questions both runs asked, split by whether this run judged
    them or reused a verdict; None when this run reused nothing (the totals are like with like)."""
    old_by_id = base.by_id()
    judged = reused = 0
    judged_old = judged_new = reused_old = 0.0
    for new in head.questions:
        old = old_by_id.get(new.id)
        if old is None:
            continue
        for name, metric in new.metrics.items():
            before = old.metrics.get(name)
            if before is None or metric.kind != "judge":
                continue  # judge-free, or not judged on the baseline
            if metric.cached:
                reused += 1
                reused_old += before.judge_cost_usd
            else:
                judged += 1
                judged_old += before.judge_cost_usd
                judged_new += metric.judge_cost_usd
    if not reused:
        return None
    return JudgeCost(judged, reused, judged_old, judged_new, reused_old)
