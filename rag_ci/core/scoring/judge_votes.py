"""When a judge's verdict is established: the confirmation rule of docs/noise.md, "Judge noise". Pure.

A judge at temperature 0 still disagrees with itself on borderline verdicts. Model it as
flipping each verdict independently with probability `p` (its disagreement rate: the
calibration record's when the project has one, else `DEFAULT_DISAGREEMENT`). After `f`
failing and `s` passing verdicts on the same answer, the odds that the answer truly fails
rather than passes are ((1 - p) / p) ** (f - s): the evidence is the *lead* of one side.

A side (the head's answer, or the baseline's stored answer) is established when its lead
reaches `lead_needed(p, confirm_runs)` votes: the smallest lead whose chance of coming
from noise alone, p ** lead, is at most `FALSE_ALARM_TARGET`, never more than
`confirm_runs` (the most verdicts either side gets). Votes are drawn one at a time and
drawing stops as soon as the lead is reached or can no longer be reached within
`confirm_runs` votes: the side is then *split* (shown "judge split 2–1", never gating).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Literal

# Without a calibration record: a pinned LLM judge at temperature 0 typically flips a few
# per cent of its borderline verdicts; 5 % errs on the side of asking for more evidence.
DEFAULT_DISAGREEMENT = 0.05
# The chance an unchanged verdict's noise alone establishes a flip, per judged metric.
FALSE_ALARM_TARGET = 1e-3
# A measured disagreement rate is clamped here: 0 would make one vote proof, 0.5 is a coin.
_RATE_BOUNDS = (0.005, 0.3)

State = Literal["pass", "fail", "split", "open"]


def disagreement_rate(measured: float | None) -> float:
    """The p the rule uses: the measured rate (clamped), else the documented default."""
    if measured is None or math.isnan(measured):
        return DEFAULT_DISAGREEMENT
    low, high = _RATE_BOUNDS
    return min(max(measured, low), high)


def lead_needed(p: float, confirm_runs: int) -> int:
    """Votes one side must lead by: the smallest lead with p ** lead <= FALSE_ALARM_TARGET, in [1, confirm_runs]."""
    p = disagreement_rate(p)
    lead = max(1, math.ceil(math.log(FALSE_ALARM_TARGET) / math.log(p) - 1e-9))
    return max(1, min(lead, confirm_runs))


def state(votes: list[bool], lead: int, confirm_runs: int) -> State:
    """ "pass"/"fail" once one side leads by `lead`; "split" when that can no longer happen within
    `confirm_runs` votes; "open" while another vote may decide."""
    margin = votes.count(False) - votes.count(True)
    if margin >= lead:
        return "fail"
    if -margin >= lead:
        return "pass"
    left = max(confirm_runs, len(votes)) - len(votes)
    return "split" if abs(margin) + left < lead else "open"


def split_label(votes: list[bool]) -> str:
    """'2–1': the larger side first, as the report prints it."""
    a, b = votes.count(False), votes.count(True)
    return f"{max(a, b)}–{min(a, b)}"


@dataclass(frozen=True)
class Odds:
    """One side's confirmation against a judge flipping p of its verdicts, starting from one vote."""

    wrong: float  # P(the side is established the wrong way)
    split: float  # P(it ends split)
    votes: float  # expected votes drawn after the first


def side_odds(p: float, lead: int, confirm_runs: int, first_wrong: bool, hoped_wrong: bool) -> Odds:
    """Exactly, by walking every sequence of votes: the first vote is wrong (`first_wrong`) or right,
    each later vote wrong with probability p. Drawing stops, as the scorer's does, once the verdict
    that would matter (the wrong one when `hoped_wrong`) can no longer be established."""

    @cache
    def walk(wrong_votes: int, right_votes: int) -> tuple[float, float, float]:
        votes = [False] * wrong_votes + [True] * right_votes  # True: the right verdict
        now = state(votes, lead, confirm_runs)
        hoped_lead = (wrong_votes - right_votes) * (1 if hoped_wrong else -1)
        if now == "open" and hoped_lead + confirm_runs - len(votes) < lead:
            now = "split"
        if now == "fail":
            return 1.0, 0.0, 0.0
        if now in ("pass", "split"):
            return 0.0, float(now == "split"), 0.0
        w1, s1, v1 = walk(wrong_votes + 1, right_votes)
        w2, s2, v2 = walk(wrong_votes, right_votes + 1)
        return p * w1 + (1 - p) * w2, p * s1 + (1 - p) * s2, 1 + p * v1 + (1 - p) * v2

    wrong, split, votes = walk(1, 0) if first_wrong else walk(0, 1)
    return Odds(wrong, split, votes)


@dataclass(frozen=True)
class RuleRow:
    """docs/noise.md's table: an unchanged question judged afresh (a reworded answer)."""

    p: float
    lead: int
    false_regression: float  # P(an unchanged metric is called a regression)
    split_shown: float  # P(it is shown "judge split", not gating)
    calls_per_metric: float  # expected confirmation judgements per freshly judged metric
    caught: float  # P(a metric truly broken by the PR is called a regression)


def rule_row(p: float, confirm_runs: int = 3, truly_failing: float = 0.0) -> RuleRow:
    """For a metric truly passing on both sides (`truly_failing` = 0) or failing on both with that
    share: the chance of a false regression, the split share, the confirmation cost, and the chance a
    real regression (truly pass → truly fail) is caught."""
    lead = lead_needed(p, confirm_runs)
    # Truly passing on both: the baseline holds a pass (ignore its p-chance of a noise fail: no flip
    # then), the head's fresh verdict fails by noise with probability p.
    head = side_odds(p, lead, confirm_runs, first_wrong=True, hoped_wrong=True)
    base_right = side_odds(p, lead, confirm_runs, first_wrong=False, hoped_wrong=False)
    pass_both = p * head.wrong * (1 - base_right.wrong - base_right.split)
    split_pp = p * (head.split + head.wrong * base_right.split)
    calls_pp = p * (head.votes + head.wrong * base_right.votes)
    # Truly failing on both: the baseline's stored pass is noise (p), the head fails rightly (1 - p).
    head_right = side_odds(p, lead, confirm_runs, first_wrong=False, hoped_wrong=False)
    base_noise = side_odds(p, lead, confirm_runs, first_wrong=True, hoped_wrong=True)
    hr = 1 - head_right.wrong - head_right.split  # the head's fail established
    fail_both = p * (1 - p) * hr * base_noise.wrong
    split_ff = p * (1 - p) * (head_right.split + hr * base_noise.split)
    calls_ff = p * (1 - p) * (head_right.votes + hr * base_noise.votes)
    caught = (1 - p) * hr * (1 - base_right.wrong - base_right.split)  # baseline truly passed, stored pass
    t = truly_failing
    return RuleRow(
        p,
        lead,
        (1 - t) * pass_both + t * fail_both,
        (1 - t) * split_pp + t * split_ff,
        (1 - t) * calls_pp + t * calls_ff,
        caught,
    )
