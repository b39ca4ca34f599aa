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
from rag_ci.core.scoring.judge_votes import HOLDS_AT, Rule, state
from rag_ci.judges.majority import (
    choose_by_majority,
    decide_by_majority,
    majority_reached,
)
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.replies import CallLog
from rag_ci.judges.split_on import split_on

Case = tuple[Question, str, list[Context]]
HEAD, BASELINE = "this PR's answer", "the baseline's stored answer"


@dataclass(frozen=True)
class Measurement:
    result: MetricResult
    log: CallLog


# The scorer's one measurement: (spec, case, key, known=…, fresh=…) → Measurement.
Judge = Callable[..., Awaitable[Measurement]]


def votes(runs: list[Measurement]) -> list[bool]:
    return [r.result.passed for r in runs if r.result.error is None and r.result.passed is not None]


class ConfirmationError(Exception):
    """A re-judgement failed for good (the client's retries spent): the metric is an error, never a vote."""

    def __init__(self, errored: Measurement, side: str):
        super().__init__(errored.result.error)
        self.errored, self.side = errored, side


async def draw(
    judge: Judge,
    spec: JudgeMetricSpec,
    case: Case,
    key: str,
    runs: list[Measurement],
    earlier: list[bool],
    *,
    rule: Rule,
    known: Mapping[str, Any],
    hoped: bool,
    side: str,
    holds_at: int = HOLDS_AT,
) -> str:
    """Judge `case` again, one vote at a time, until `state` decides; `earlier` are votes given
    before `runs` (the baseline's stored verdict). → "pass", "fail" or "split". A re-judgement
    that errors raises ConfirmationError: it is no vote."""
    while True:
        now = state(earlier + votes(runs), rule, hoped, holds_at)
        if now != "open":
            return now
        replayed = runs[0].log.extraction() if runs else known
        measured = await judge(spec, case, key, known=replayed, fresh=True)
        if measured.result.error is not None or measured.result.passed is None:
            raise ConfirmationError(measured, side)
        runs.append(measured)


def errored(
    first: Measurement, runs: list[Measurement], failure: ConfirmationError, calls: int
) -> MetricResult:
    """The metric as an error for this question: a judge that failed while confirming decides nothing."""
    every = [*runs, failure.errored]
    message = (
        f"{failure.errored.result.error} (while re-judging {failure.side} to confirm {first.result.name})"
    )
    return first.result.model_copy(
        update={
            "passed": None,
            "error": message,
            "confirm_runs": votes(runs),
            "judge_cost_usd": round(sum(r.result.judge_cost_usd for r in every), 8),
            "confirm_calls": calls + failure.errored.log.calls,
        }
    )


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
    rule: Rule,
    known: Mapping[str, Any],
) -> tuple[Measurement, MetricResult]:
    """A fresh pass → fail flip (`runs` holds the fresh measurement, and a second verdict under
    judge.votes_on_changed_answers: 2), confirmed on both sides. → (the measurement standing for
    the head's verdict, the head's verdict with both sides' votes)."""
    base_runs: list[Measurement] = []
    try:
        head = await draw(judge, spec, case, key, runs, [], rule=rule, known=known, hoped=False, side=HEAD)
        if head == "fail" and baseline_case is not None:
            base = await draw(
                judge,
                spec,
                baseline_case,
                baseline_key or "",
                base_runs,
                [bool(stored.passed)],
                rule=rule,
                known=known,
                hoped=True,
                side=BASELINE,
            )
    except ConfirmationError as failure:
        return runs[0], errored(runs[0], runs + base_runs, failure, _calls(runs[1:] + base_runs))
    calls = _calls(runs[1:] + base_runs)
    head_votes = votes(runs)
    if head != "fail":
        # Not established: the verdict does not move (the baseline's pass stands); split, or the
        # head's pass held (the fail was noise: shown among the unstable verdicts, not as split).
        passing = next((r for r in runs if r.result.passed), None)
        chosen = passing or runs[0]
        verdict = {"passed": True} if passing else {"passed": None}
        return chosen, _with(
            chosen, runs, head_votes, calls, judge_split=head == "split", split_on=split_on(runs), **verdict
        )
    chosen = next(r for r in runs if r.result.passed is False)
    if baseline_case is None:
        # Nothing stored that the baseline's verdict was given on (an answer missing, emptied or
        # replaced): its pass cannot be asked again, and stands.
        return chosen, _with(chosen, runs, head_votes, calls)
    base_votes = [bool(stored.passed), *votes(base_runs)]
    # Its pass established: a regression; its fail held: the stored pass was noise; else split.
    confirmed = {"pass": True, "fail": False}.get(base)
    return chosen, _with(
        chosen,
        runs,
        head_votes,
        calls,
        baseline_votes=base_votes,
        baseline_confirmed=confirmed,
        baseline_cache_key=baseline_key,
        judge_split=confirmed is None,
        split_on=split_on(base_runs if confirmed is None else runs),
        extra_cost=sum(r.result.judge_cost_usd for r in base_runs),
    )


async def confirm_stored_fail(
    judge: Judge,
    spec: JudgeMetricSpec,
    case: Case,
    key: str,
    runs: list[Measurement],
    baseline_case: Case,
    baseline_key: str,
    *,
    rule: Rule,
    known: Mapping[str, Any],
    holds_at: int,
) -> tuple[Measurement, MetricResult]:
    """A changed answer failing a metric its baseline failed too: the baseline's fail may be noise
    hiding a regression. Its stored answer is re-judged first (its fail usually holds: one or two
    calls); only its pass established sends the head's answer to be confirmed. A regression when
    both hold: recorded as the baseline's votes (its stored fail first) with `baseline_confirmed`."""
    base_runs: list[Measurement] = []
    try:
        base = await draw(
            judge,
            spec,
            baseline_case,
            baseline_key,
            base_runs,
            [False],
            rule=rule,
            known=known,
            hoped=True,
            side=BASELINE,
            holds_at=holds_at,
        )
        head = "pass"
        if base == "pass":
            head = await draw(
                judge, spec, case, key, runs, [], rule=rule, known=known, hoped=False, side=HEAD
            )
    except ConfirmationError as failure:
        return runs[0], errored(runs[0], runs + base_runs, failure, _calls(runs[1:] + base_runs))
    calls = _calls(runs[1:] + base_runs)
    extra = sum(r.result.judge_cost_usd for r in base_runs)
    if base != "pass":  # the baseline's fail holds (or stays split): failing before and now, as judged
        return runs[0], _with(runs[0], runs, votes(runs), calls, extra_cost=extra)
    base_votes = [False, *votes(base_runs)]
    if head == "fail":
        chosen = next(r for r in runs if r.result.passed is False)
        return chosen, _with(
            chosen,
            runs,
            votes(runs),
            calls,
            baseline_votes=base_votes,
            baseline_confirmed=True,
            baseline_cache_key=baseline_key,
            extra_cost=extra,
        )
    passing = next((r for r in runs if r.result.passed), runs[0])
    return passing, _with(
        passing,
        runs,
        votes(runs),
        calls,
        passed=True if passing.result.passed else None,
        baseline_votes=base_votes,
        baseline_confirmed=True,
        baseline_cache_key=baseline_key,
        judge_split=head == "split",
        split_on=split_on(runs),
        extra_cost=extra,
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


def _calls(runs: list[Measurement]) -> int:
    return sum(r.log.calls for r in runs)


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
