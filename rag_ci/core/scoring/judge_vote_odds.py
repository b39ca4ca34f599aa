"""The confirmation rule's odds, exactly: every sequence of votes walked (docs/noise.md, "Judge noise"). Pure.

A judge flips each verdict independently with probability p. One side's confirmation is a
random walk of votes from the verdicts it starts with, stopped by `judge_votes.state`; its
odds follow by dynamic programming over (fails, passes), like the gambler's ruin with the cap
as a horizon. From the odds of each side: the rule's false-regression rate per unchanged
metric, its power on a truly broken metric, and what it costs, under either policy for a
changed answer (`judge.votes_on_changed_answers`: 1, or 2 when its first verdict passes).
`rule_for` picks the lead and the cap from those rates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from rag_ci.core.scoring.judge_votes import (
    FALSE_ALARM_TARGET,
    HOLDS_AT,
    MAX_VOTES,
    POWER_TARGET,
    Rule,
    disagreement_rate,
    state,
    stored_fail_holds_at,
)


@dataclass(frozen=True)
class SideOdds:
    """How one side's confirmation ends: the verdict that would matter established, or not."""

    hoped: float  # P(the verdict that would matter is established)
    split: float  # P(it ends split)
    votes: float  # expected votes drawn (beyond those it starts with)


@cache
def side_odds(
    p: float, rule: Rule, truth: bool, hoped: bool, fails: int, passes: int, holds_at: int = HOLDS_AT
) -> SideOdds:
    """A side whose answer truly passes (`truth`) or fails, starting from `fails` and `passes`
    votes, each later vote right with probability 1 - p, drawn until `state` stops."""
    now = state([False] * fails + [True] * passes, rule, hoped, holds_at)
    if now != "open":
        return SideOdds(float(now == ("pass" if hoped else "fail")), float(now == "split"), 0.0)
    right, wrong = 1 - p, p
    on_pass = side_odds(p, rule, truth, hoped, fails, passes + 1, holds_at)
    on_fail = side_odds(p, rule, truth, hoped, fails + 1, passes, holds_at)
    pass_p = right if truth else wrong
    fail_p = 1 - pass_p
    return SideOdds(
        pass_p * on_pass.hoped + fail_p * on_fail.hoped,
        pass_p * on_pass.split + fail_p * on_fail.split,
        1 + pass_p * on_pass.votes + fail_p * on_fail.votes,
    )


@dataclass(frozen=True)
class RuleRow:
    """docs/noise.md's table, per freshly judged metric (a reworded answer)."""

    p: float
    lead: int
    cap: int
    false_regression: float  # P(an unchanged metric, truly passing or failing on both sides, regresses)
    caught: (
        float  # P(a metric truly broken by the PR is called a regression), baseline judged by the same judge
    )
    power: float  # the same, given the first verdicts on both sides are right (the cap's target)
    calls_per_metric: float  # expected extra judgements per unchanged, truly passing metric


def _head(p: float, rule: Rule, truth: bool, fails: int, passes: int) -> SideOdds:
    return side_odds(p, rule, truth, False, fails, passes)  # the head's fail would matter


def _base(p: float, rule: Rule, truth: bool, stored: bool, votes_on_changed: int = 1) -> SideOdds:
    holds_at = HOLDS_AT if stored else stored_fail_holds_at(votes_on_changed)
    return side_odds(p, rule, truth, True, int(not stored), int(stored), holds_at)  # its pass would matter


def _regression(
    p: float, rule: Rule, head_truth: bool, base_truth: bool, votes_on_changed: int
) -> tuple[float, float]:
    """P(a regression) and expected extra votes for one metric, over the first verdicts of both sides.

    Stored pass, fresh fail: the head confirmed, then the baseline. Stored fail, fresh fail: the
    baseline's fail re-judged, then (its pass established) the head. Stored pass, fresh pass with
    `votes_on_changed` 2: a second verdict, and its fail confirmed as the first case."""
    q = 1 - p
    base_p = q if base_truth else p  # the stored verdict passes
    head_p = q if head_truth else p  # the fresh verdict passes
    total = calls = 0.0
    # stored pass, fresh fail
    head, base = _head(p, rule, head_truth, 1, 0), _base(p, rule, base_truth, True)
    total += base_p * (1 - head_p) * head.hoped * base.hoped
    calls += base_p * (1 - head_p) * (head.votes + head.hoped * base.votes)
    # stored fail, fresh fail: the baseline first (its fail usually holds: the cheaper side)
    base_f = _base(p, rule, base_truth, False, votes_on_changed)
    total += (1 - base_p) * (1 - head_p) * base_f.hoped * head.hoped
    calls += (1 - base_p) * (1 - head_p) * (base_f.votes + base_f.hoped * head.votes)
    if votes_on_changed > 1:  # stored pass, fresh pass: a second verdict
        second = _head(p, rule, head_truth, 1, 1)
        again = base_p * head_p
        calls += again
        total += again * (1 - head_p) * second.hoped * base.hoped
        calls += again * (1 - head_p) * (second.votes + second.hoped * base.votes)
    return total, calls


def rule_row(
    p: float,
    confirm_runs: int = 3,
    votes_on_changed: int = 1,
    truly_failing: float = 0.0,
    assumed: float | None = None,
) -> RuleRow:
    """The rule `rule_for(assumed or p, confirm_runs)` (built for the disagreement rate the config
    gives, `assumed`, else for p) on a judge flipping p of its verdicts: on a metric truly passing on
    both sides (or failing on both, a share `truly_failing` of them), and on a truly broken one."""
    rule = rule_for(p if assumed is None else assumed, confirm_runs)
    p = disagreement_rate(p)
    passing, calls = _regression(p, rule, True, True, votes_on_changed)
    failing, _ = _regression(p, rule, False, False, votes_on_changed)
    caught, _ = _regression(p, rule, False, True, votes_on_changed)
    t = truly_failing
    return RuleRow(
        p,
        rule.lead,
        rule.cap,
        (1 - t) * passing + t * failing,
        caught,
        _power(p, rule),
        calls,
    )


def _power(p: float, rule: Rule) -> float:
    return _head(p, rule, False, 1, 0).hoped * _base(p, rule, True, True).hoped


@cache
def rule_for(p: float, confirm_runs: int = 3) -> Rule:
    """The smallest lead whose false-regression rate (either policy, a metric truly passing or
    failing on both sides) is at most FALSE_ALARM_TARGET, with the smallest cap (at least
    `confirm_runs`) establishing a truly broken metric with probability POWER_TARGET."""
    p = disagreement_rate(p)
    for lead in range(1, MAX_VOTES + 1):
        low = max(lead, confirm_runs)
        cap = next((n for n in range(low, MAX_VOTES + 1) if _power(p, Rule(lead, n)) >= POWER_TARGET), None)
        rule = Rule(lead, cap if cap is not None else max(low, MAX_VOTES))
        worst = max(
            _regression(p, rule, truth, truth, votes)[0] for truth in (True, False) for votes in (1, 2)
        )
        if worst <= FALSE_ALARM_TARGET:
            return rule
    return Rule(MAX_VOTES, max(MAX_VOTES, confirm_runs))
