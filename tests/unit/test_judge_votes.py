"""The judge-noise rule (docs/noise.md, "Judge noise"): when votes establish a verdict, and what it costs."""

import pytest
from test_noise import question, run

from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_html, render_markdown
from rag_ci.core.results import MetricResult, Sample
from rag_ci.core.scoring.judge_votes import (
    DEFAULT_DISAGREEMENT,
    disagreement_rate,
    lead_needed,
    rule_row,
    side_odds,
    state,
)


def test_the_lead_a_verdict_needs_grows_with_the_judges_disagreement_and_never_exceeds_confirm_runs():
    assert lead_needed(0.02, 3) == 2  # 0.02² = 4e-4 ≤ 1e-3
    assert lead_needed(0.05, 3) == 3 and lead_needed(0.10, 3) == 3
    assert lead_needed(0.10, 5) == 3 and lead_needed(0.25, 5) == 5
    assert lead_needed(0.05, 1) == 1
    assert disagreement_rate(None) == DEFAULT_DISAGREEMENT and disagreement_rate(0.0) == 0.005


def test_votes_stop_as_soon_as_the_lead_is_reached_or_can_no_longer_be():
    assert state([False], 3, 3) == "open"
    assert state([False, False], 3, 3) == "open"
    assert state([False, False, False], 3, 3) == "fail"
    assert state([False, True], 3, 3) == "split"  # one vote left cannot make a lead of 3
    assert state([False, True], 2, 5) == "open"
    assert state([True, True], 2, 3) == "pass"


def test_the_exact_odds_match_a_direct_count_of_vote_sequences():
    # Lead 3 of 3 votes from a wrong first vote: established wrongly only by two more wrong votes.
    odds = side_odds(0.1, 3, 3, first_wrong=True, hoped_wrong=True)
    assert odds.wrong == pytest.approx(0.01) and odds.split == pytest.approx(0.99)
    assert odds.votes == pytest.approx(1 + 0.1)  # the second vote always, the third after a wrong second
    row = rule_row(0.05)
    assert row.false_regression == pytest.approx(0.05**3 * (1 - 0.05**2 - 2 * 0.05 * 0.95), rel=1e-6)


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
