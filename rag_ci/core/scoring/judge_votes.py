"""When a judge's verdict is established: the confirmation rule of docs/noise.md, "Judge noise". Pure.

A judge at temperature 0 still disagrees with itself on borderline verdicts. Model it as
flipping each verdict independently with probability `p` (its disagreement rate: the
calibration record's when the project has one, else `DEFAULT_DISAGREEMENT`). After `f`
failing and `s` passing verdicts on the same answer, the odds that the answer truly fails
rather than passes are ((1 - p) / p) ** (f - s): the evidence is the *lead* of one side.

A side (the head's answer, or the baseline's stored answer) is judged one vote at a time
until one verdict leads by `Rule.lead`, or `Rule.cap` votes are given. The lead is the
smallest whose exact false-regression rate (rag_ci.core.scoring.judge_vote_odds) is at most
`FALSE_ALARM_TARGET` per unchanged metric; the cap, well above it, the smallest that
establishes a truly broken metric (head and baseline verdicts right) with probability
`POWER_TARGET`. Drawing also stops once the verdict that would matter (the head's fail, the
baseline's pass) can no longer be established within the cap: then the other verdict holds
when it leads by two or more, else the side is *split*. A split is what remains at the
cap, never one dissent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

# Without a calibration record: a pinned LLM judge at temperature 0 typically flips a few
# per cent of its borderline verdicts; 5 % errs on the side of asking for more evidence.
DEFAULT_DISAGREEMENT = 0.05
# The chance an unchanged verdict's noise alone makes a regression, per judged metric.
FALSE_ALARM_TARGET = 1e-3
# The chance a truly broken metric, its first verdicts right, is established on both sides.
POWER_TARGET = 0.999
# The most votes either side ever gets (its first or stored verdict included).
MAX_VOTES = 15
# A measured disagreement rate is clamped here: 0 would make one vote proof, 0.5 is a coin.
_RATE_BOUNDS = (0.005, 0.3)
# The verdict that does not matter holds, once the other can no longer be established, when
# it leads by this much (a lead of one is a single dissent: a split).
HOLDS_AT = 2

State = Literal["pass", "fail", "split", "open"]


@dataclass(frozen=True)
class Rule:
    """How many votes establish a verdict (`lead`) and how many either side gets at most (`cap`)."""

    lead: int
    cap: int

    def __post_init__(self) -> None:
        if not 1 <= self.lead <= self.cap:
            raise ValueError(
                f"a confirmation rule needs 1 <= lead <= cap, got lead {self.lead}, cap {self.cap}"
            )


def disagreement_rate(measured: float | None) -> float:
    """The p the rule uses: the measured rate (clamped), else the documented default."""
    if measured is None or math.isnan(measured):
        return DEFAULT_DISAGREEMENT
    low, high = _RATE_BOUNDS
    return min(max(measured, low), high)


def state(votes: list[bool], rule: Rule, hoped: bool | None = None, holds_at: int = HOLDS_AT) -> State:
    """ "pass"/"fail" once one side leads by `rule.lead`; with `hoped` (the verdict that would
    matter), once it can no longer be established within `rule.cap` votes: the other verdict when
    it leads by two or more, else "split"; "split" at the cap; "open" while another vote may decide."""
    margin = votes.count(False) - votes.count(True)
    if margin >= rule.lead:
        return "fail"
    if -margin >= rule.lead:
        return "pass"
    left = max(rule.cap - len(votes), 0)
    if hoped is not None:
        hoped_lead = -margin if hoped else margin
        if hoped_lead <= -holds_at:
            return "fail" if hoped else "pass"
        if hoped_lead + left < rule.lead:
            return "split"
    return "split" if left == 0 else "open"


def stored_fail_holds_at(votes_on_changed: int) -> int:
    """Where a baseline's stored fail, re-judged because it may be noise hiding a regression, holds.
    By default at a lead of two: one re-judgement agreeing with it, the cheap case of every answer
    failing before and now. Under `judge.votes_on_changed_answers: 2` the team pays for power: at
    three, as it takes against a first verdict that would matter."""
    return HOLDS_AT + (votes_on_changed > 1)


def split_label(votes: list[bool]) -> str:
    """'4–3': the larger side first, as the report prints it (only the votes given)."""
    a, b = votes.count(False), votes.count(True)
    return f"{max(a, b)}–{min(a, b)}"
