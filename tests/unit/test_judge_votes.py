"""The judge-noise rule (docs/noise.md, "Judge noise"): when votes establish a verdict, and what it costs."""

import pytest
from test_noise import question, run

from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_html, render_markdown
from rag_ci.core.results import MetricResult, Sample
from rag_ci.core.scoring.judge_vote_odds import rule_for, rule_row, side_odds
from rag_ci.core.scoring.judge_votes import (
    DEFAULT_DISAGREEMENT,
    FALSE_ALARM_TARGET,
    MAX_VOTES,
    POWER_TARGET,
    Rule,
    disagreement_rate,
    split_label,
    state,
)


def test_the_lead_grows_with_the_judges_disagreement_and_the_cap_is_what_power_needs():
    assert rule_for(0.02) == Rule(2, 6)
    assert rule_for(0.05) == Rule(3, 9)  # 99.94 % of truly broken metrics established (≥ 99.9 %)
    # At 10 % a lead of 3 lets 1.1e-3 false regressions through per metric (p³ ignores the walk): 4,
    # and no cap within MAX_VOTES reaches the power target: the longest one.
    assert rule_for(0.10) == Rule(4, MAX_VOTES)
    assert rule_for(0.05, confirm_runs=11) == Rule(3, 11)  # gate.confirm_runs raises the cap, never lowers it
    assert disagreement_rate(None) == DEFAULT_DISAGREEMENT and disagreement_rate(0.0) == 0.005
    with pytest.raises(ValueError, match="lead <= cap"):
        Rule(4, 3)


def test_votes_are_drawn_until_one_side_leads_by_the_lead_or_the_cap_and_one_dissent_is_never_a_split():
    rule = Rule(3, 7)
    assert state([False], rule, hoped=False) == "open"
    assert state([False, True], rule, hoped=False) == "open"  # one dissent: draw on
    assert state([False, True, False, False], rule, hoped=False) == "open"
    assert state([False, True, False, False, False], rule, hoped=False) == "fail"
    # The verdict that would matter trails by two: the other holds.
    assert state([False, True, True, True], rule, hoped=False) == "pass"
    assert state([True, False, False], rule, hoped=True) == "open"
    assert state([True, False, False, False], rule, hoped=True) == "fail"
    # At the cap, whatever is not established is split; the label counts only the votes given.
    votes = [False, True, False, True, False, True, False]
    assert state(votes, rule, hoped=False) == "split" and split_label(votes) == "4–3"
    # Without the verdict that matters (symmetric): established at the lead, split at the cap.
    assert state([True, True, True], rule) == "pass" and state([True, False] * 3 + [True], rule) == "split"


def test_the_exact_odds_match_a_direct_count_of_vote_sequences():
    # Lead 2, cap 3, the verdict that matters a fail, the answer truly passing, first vote a (wrong)
    # fail: established by a second fail (p); after a pass (1 - p) one vote left cannot make a lead
    # of 2: split (a cap this close to the lead is what made one dissent a split).
    p = 0.1
    odds = side_odds(p, Rule(2, 3), True, False, 1, 0)
    assert odds.hoped == pytest.approx(p) and odds.split == pytest.approx(1 - p)
    assert odds.votes == pytest.approx(1)
    # A long cap is the gambler's ruin: from +1, reach +3 before -2 (where the pass holds), each
    # step up with probability p: (1 - ρ^3) / (1 - ρ^5), ρ = (1 - p) / p.
    rho = (1 - p) / p
    odds = side_odds(p, Rule(3, 15), True, False, 1, 0)
    assert odds.hoped == pytest.approx((1 - rho**3) / (1 - rho**5), rel=1e-3)


@pytest.mark.parametrize("p", [0.02, 0.05, 0.10])
def test_the_rule_keeps_false_regressions_under_target_and_power_over_target(p):
    for votes in (1, 2):
        row = rule_row(p, votes_on_changed=votes)
        failing = rule_row(p, votes_on_changed=votes, truly_failing=1.0)
        assert row.false_regression <= FALSE_ALARM_TARGET and failing.false_regression <= FALSE_ALARM_TARGET
        assert row.power >= (POWER_TARGET if p <= 0.05 else 0.995)
    one, two = rule_row(p), rule_row(p, votes_on_changed=2)
    # One verdict per changed answer cannot beat 1 - p; a second verdict when it passes nearly can 1 - p².
    assert (1 - p) * 0.98 <= one.caught <= 1 - p
    assert two.caught > one.caught and two.caught <= 1 - p * p
    assert two.calls_per_metric > one.calls_per_metric + 0.9  # the second verdict's price: about one call


def test_a_flip_the_judge_could_not_establish_does_not_gate_and_says_so_in_its_row():
    head_split = MetricResult(
        name="correctness",
        kind="judge",
        score=1.0,
        threshold=0.5,
        passed=True,
        confirm_runs=[False, True],
        unstable=True,
        judge_split=True,
        confirm_calls=1,
    )
    noise = MetricResult(
        name="correctness",
        kind="judge",
        score=0.0,
        threshold=0.5,
        passed=False,
        confirm_runs=[False] * 3,
        baseline_votes=[True, False],
        baseline_confirmed=False,
        confirm_calls=3,
    )
    metric = MetricResult(name="correctness", kind="judge", score=1.0, threshold=0.5, passed=True)
    base = run(
        question("A").model_copy(update={"metrics": {"correctness": metric}}),
        question("B").model_copy(update={"metrics": {"correctness": metric}}),
    )
    head = run(
        question("A").model_copy(update={"metrics": {"correctness": head_split}}),
        question("B", "fail").model_copy(update={"metrics": {"correctness": noise}}),
    )
    result = compare(base, head)
    assert result.regressions == () and result.worse == () and result.verdict == "pass"
    labels = {n.id: n.label for n in result.judge_noise}
    assert labels == {
        "A": "judge split 1–1 (correctness)",
        "B": "baseline verdict was noise: correctness on the baseline's answer re-judged 1 fail, 0 pass",
    }
    text = render_markdown(head, result)
    assert "| A | judge split 1–1 (correctness) |" in text
    assert "Judge confirmation: 4 calls re-judging flipped verdicts" in text
    html = render_html(head, result)
    assert "(judge split, not gating)" in html and "(baseline verdict was noise, not gating)" in html


def test_byte_identical_reasked_answers_count_once():
    base = run(question("A"))
    votes = MetricResult(
        name="correctness",
        kind="judge",
        score=0.0,
        threshold=0.5,
        passed=False,
        confirm_runs=[False, False, True],
    )
    same = [Sample(verdict="fail", answer_hash="h1") for _ in range(4)]
    head = run(
        question("A", "fail").model_copy(
            update={"samples": same, "reasked": True, "pass_rate": 0.0, "metrics": {"correctness": votes}}
        )
    )
    text = render_markdown(head, compare(base, head))
    assert "1 distinct answer, re-asked 3×, judged 3×: 2 fail, 1 pass" in text
    assert "0/4 answers passed" not in text


def test_a_flip_that_only_the_baselines_noise_explains_is_not_reasked():
    from rag_ci.core.comparison.noise import should_reask

    passed = MetricResult(name="correctness", kind="judge", score=1.0, threshold=0.5, passed=True)
    base = question("A").model_copy(update={"metrics": {"correctness": passed}})
    noise = MetricResult(
        name="correctness",
        kind="judge",
        score=0.0,
        threshold=0.5,
        passed=False,
        baseline_votes=[True, False],
        baseline_confirmed=False,
    )
    established = noise.model_copy(update={"baseline_votes": [True, True, True], "baseline_confirmed": True})
    assert not should_reask(
        question("A", "fail").model_copy(update={"metrics": {"correctness": noise}}), base, 3
    )
    assert should_reask(
        question("A", "fail").model_copy(update={"metrics": {"correctness": established}}), base, 3
    )
