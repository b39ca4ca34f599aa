"""A fresh verdict that flipped against the baseline, confirmed on both sides (docs/noise.md, "Judge noise").

The baseline's verdict was given once, by a judge that disagrees with itself, so a pass → fail
flip is evidence about two verdicts. The head's answer is judged again, one verdict at a time,
until its side is established or split (`rag_ci.core.scoring.judge_votes`); only a head failure
so established sends the baseline's *stored* answer (results.json holds it, with its contexts:
no target call) to the same judge, its stored verdict counting as the first vote. A regression
needs both: the head fails and the baseline passes. A baseline that fails when asked again was
a noise pass (reported, not gating); either side still split is "judge split" (shown, not gating).

Every re-judgement replays the measurement's extraction steps (truths, claims, statements,
GEval's steps) and asks the verdict step again: what decides the threshold, not the whole metric.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context, MetricResult
from rag_ci.core.scoring.judge_votes import state
from rag_ci.judges.majority import (
    choose_by_majority,
    decide_by_majority,
    majority_reached,
)
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.replies import CallLog

Case = tuple[Question, str, list[Context]]


@dataclass(frozen=True)
class Measurement:
    result: MetricResult
    log: CallLog


# The scorer's one measurement: (spec, case, key, known=…, fresh=…) → Measurement.
Judge = Callable[..., Awaitable[Measurement]]


def votes(runs: list[Measurement]) -> list[bool]:
    return [r.result.passed for r in runs if r.result.error is None and r.result.passed is not None]


async def draw(
    judge: Judge,
    spec: JudgeMetricSpec,
    case: Case,
    key: str,
    runs: list[Measurement],
    earlier: list[bool],
    *,
    lead: int,
    confirm_runs: int,
    known: Mapping[str, Any],
    hoped: bool | None = None,
) -> str:
    """Judge `case` again until its side is established or split; `earlier` are votes given before
    `runs` (the baseline's stored verdict). With `hoped` (the verdict that would matter: the head's
    fail, the baseline's pass), drawing stops once it can no longer be established. → "pass",
    "fail" or "split"."""
    while True:
        given = earlier + votes(runs)
        now = state(given, lead, confirm_runs)
        if now == "open" and hoped is not None:
            lead_of_hoped = given.count(hoped) - given.count(not hoped)
            if lead_of_hoped + confirm_runs - len(given) < lead:
                now = "split"
        if now != "open" or len(earlier) + len(runs) >= confirm_runs:
            return "split" if now == "open" else now
        replayed = runs[0].log.extraction() if runs else known
        runs.append(await judge(spec, case, key, known=replayed, fresh=True))


async def confirm_drop(
    judge: Judge,
    spec: JudgeMetricSpec,
    case: Case,
    key: str,
    runs: list[Measurement],
    stored: MetricResult,
    baseline_case: Case | None,
    baseline_key: str | None,
    *,
    lead: int,
    confirm_runs: int,
    known: Mapping[str, Any],
) -> tuple[Measurement, MetricResult]:
    """A fresh pass → fail flip (`runs` holds the fresh measurement), confirmed on both sides.
    → (the measurement standing for the head's verdict, the head's verdict with both sides' votes)."""
    head = await draw(
        judge, spec, case, key, runs, [], lead=lead, confirm_runs=confirm_runs, known=known, hoped=False
    )
    calls = sum(r.log.calls for r in runs[1:])
    head_votes = votes(runs)
    if head != "fail":
        # Not established: the verdict does not move (the baseline's pass stands), shown as split.
        passing = next((r for r in runs if r.result.error is None and r.result.passed), None)
        chosen = passing or runs[0]
        verdict = {"passed": True} if passing else {"passed": None}
        return chosen, _with(chosen, runs, head_votes, calls, judge_split=True, **verdict)
    chosen = next(r for r in runs if r.result.error is None and r.result.passed is False)
    if baseline_case is None:  # nothing stored to ask again (a baseline without its answer)
        return chosen, _with(chosen, runs, head_votes, calls, judge_split=True)
    base_runs: list[Measurement] = []
    earlier = [bool(stored.passed)]
    base = await draw(
        judge,
        spec,
        baseline_case,
        baseline_key or "",
        base_runs,
        earlier,
        lead=lead,
        confirm_runs=confirm_runs,
        known=known,
        hoped=True,
    )
    calls += sum(r.log.calls for r in base_runs)
    cost = sum(r.result.judge_cost_usd for r in base_runs)
    base_votes = [*earlier, *votes(base_runs)]
    rejudged = base_votes[1:]
    # Not established as a pass: noise when asking again mostly failed it, else still split.
    confirmed = True if base == "pass" else False if rejudged.count(False) > rejudged.count(True) else None
    return chosen, _with(
        chosen,
        runs,
        head_votes,
        calls,
        baseline_votes=base_votes,
        baseline_confirmed=confirmed,
        baseline_cache_key=baseline_key,
        judge_split=confirmed is None,
        extra_cost=cost,
    )


def _with(
    chosen: Measurement,
    runs: list[Measurement],
    head_votes: list[bool],
    calls: int,
    *,
    extra_cost: float = 0.0,
    **update: Any,
) -> MetricResult:
    cost = sum(r.result.judge_cost_usd for r in runs) + extra_cost
    return chosen.result.model_copy(
        update={
            "confirm_runs": head_votes,
            "unstable": len(set(head_votes)) > 1,
            "judge_cost_usd": round(cost, 8),
            "confirm_calls": calls,
            **update,
        }
    )


async def confirm_gain(
    judge: Judge, spec: JudgeMetricSpec, case: Case, key: str, runs: list[Measurement], confirm_runs: int
) -> tuple[Measurement, MetricResult]:
    """A fresh fail → pass flip (a gain, never gating) judged again until a majority of `confirm_runs`
    agrees; a tie keeps the baseline's fail. Each run replays the extraction steps of the first."""
    while len(runs) < confirm_runs and not majority_reached([r.result for r in runs], confirm_runs):
        runs.append(await judge(spec, case, key, known=runs[0].log.extraction(), fresh=True))
    results = [r.result for r in runs]
    decided = decide_by_majority(results, False)
    return runs[choose_by_majority(results, False)], decided.model_copy(
        update={"confirm_calls": sum(r.log.calls for r in runs[1:])}
    )
