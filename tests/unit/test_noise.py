"""Generator-noise rules: re-ask decisions, flaky review in compare, known-flaky, budgets, gate modes."""

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.history import known_flaky
from rag_ci.core.comparison.noise import reask_decision, should_reask
from rag_ci.core.config import GateConfig, parse_config
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Sample
from rag_ci.errors import ValidationError


def sampled(qid, verdicts, *, reasked=True, **kwargs):
    """A record asked len(verdicts) times; its own verdict is the first sample's."""
    record = question(qid, verdicts[0], **kwargs)
    return record.model_copy(
        update={
            "samples": [Sample(verdict=v) for v in verdicts],
            "pass_rate": verdicts.count("pass") / len(verdicts),
            "flaky": len(set(verdicts)) > 1,
            "reasked": reasked,
        }
    )


def test_the_first_passing_sample_clears_a_flip_and_all_failing_samples_convict_it():
    assert reask_decision([False], 3) == "ask_again"
    assert reask_decision([False, True], 3) == "flaky"
    assert reask_decision([False, False, False], 3) == "ask_again"
    assert reask_decision([False, False, False, False], 3) == "regression"
    assert reask_decision([False], 0) == "regression"  # re-asking off: the old behaviour


def test_only_unchanged_pass_to_fail_or_error_flips_are_reasked():
    base = question("A")
    assert should_reask(question("A", "fail"), base, 3)
    assert should_reask(question("A", "error"), base, 3)
    assert not should_reask(question("A", "routing_error"), base, 3)  # a leak always gates
    assert not should_reask(question("A", "fail", hash_="edited"), base, 3)
    assert not should_reask(question("A", "fail"), question("A", "fail"), 3)  # not a flip
    assert not should_reask(question("A", "fail"), None, 3)
    assert not should_reask(question("A", "fail"), base, 0)


def test_a_flip_against_a_carried_passing_verdict_is_reasked_like_any_flip():
    from rag_ci.core.results import CarriedVerdict

    errored_on_main = question("A", "error")
    carried_pass = errored_on_main.model_copy(
        update={"carried": CarriedVerdict(verdict="pass", question_hash=errored_on_main.question_hash)}
    )
    carried_fail = errored_on_main.model_copy(
        update={"carried": CarriedVerdict(verdict="fail", question_hash=errored_on_main.question_hash)}
    )
    assert should_reask(question("A", "fail"), carried_pass, 3)
    assert not should_reask(question("A", "fail"), carried_fail, 3)
    assert not should_reask(question("A", "fail"), errored_on_main, 3)  # nothing known: not a flip


def test_a_reasked_flip_that_passed_once_is_flaky_not_a_regression():
    base = run(question("A"), question("B"))
    head = run(sampled("A", ["fail", "fail", "pass"]), sampled("B", ["fail", "fail", "fail", "fail"]))
    result = compare(base, head)
    assert [c.id for c in result.regressions] == ["B"]
    (flaky,) = result.flaky
    assert (flaky.id, flaky.passed, flaky.samples) == ("A", 1, 3)
    text = render_markdown(head, result)
    assert "### Flaky (1, not gating)" in text and "| A | 1/3 |" in text
    assert "0/4 answers passed, re-asked 3×" in text  # the regression says how many answers failed


def test_a_known_flaky_question_needs_a_significant_number_of_failures():
    base = run(question("A"), question("B"))
    head = run(sampled("A", ["fail"] * 4), sampled("B", ["fail"] * 4))
    # On main A passes half the time: 4/4 failures happen with p = 0.5**4 = 0.0625 > 0.05.
    # B passes 90 % of the time: 0.1**4 = 0.0001, a regression.
    result = compare(base, head, known_flaky={"A": 0.5, "B": 0.9})
    assert [c.id for c in result.regressions] == ["B"]
    assert [f.id for f in result.flaky] == ["A"] and "p = 0.062" in result.flaky[0].why


def test_the_baselines_own_samples_give_the_pass_rate_for_the_known_flaky_rule():
    head = run(sampled("A", ["fail"] * 4), sampled("B", ["fail"] * 4))
    # 2/3: (1/3)**4 = 0.012 <= 0.05
    base = run(
        sampled("A", ["pass", "fail", "pass", "fail"], reasked=False),  # 2/4: 0.5**4 = 0.0625 > 0.05
        sampled("B", ["pass", "fail", "pass"], reasked=False),
    )
    result = compare(base, head)
    assert [c.id for c in result.regressions] == ["B"] and [f.id for f in result.flaky] == ["A"]
    # A re-asked baseline's samples followed a failure: they say nothing of its pass rate.
    reasked_base = run(
        sampled("A", ["pass", "fail"], reasked=True), sampled("B", ["pass", "fail"], reasked=True)
    )
    assert [c.id for c in compare(reasked_base, head).regressions] == ["A", "B"]


def test_known_flaky_pools_the_history_of_main():
    entries = [{"pass_rate": 0.9}] * 7 + [
        {"pass_rate": 0.9, "flaky": {"A": [1, 2]}},
        {"pass_rate": 0.9, "flaky": {"A": [2, 3], "B": [1, 2]}},
        {"pass_rate": 0.9},
    ]
    marks = known_flaky(entries, last=10)
    # A: 3 of 5 samples in its two marked runs + 8 unmarked runs counted as one pass each.
    assert marks == {"A": round(11 / 13, 4), "B": round(10 / 11, 4)}
    assert known_flaky(entries + [{"pass_rate": 0.9}] * 10, last=10) == {}  # marks lapse
    assert known_flaky([{"pass_rate": 1, "flaky": {"A": "junk", "B": [3, 2]}}]) == {}


def test_a_budget_breach_is_listed_with_its_numbers_and_fails_the_gate():
    base = run(question("A", latency=1.0, cost=0.001), question("B", latency=1.0, cost=0.001))
    head = run(question("A", latency=1.5, cost=0.003), question("B", latency=1.5, cost=0.003))
    gate = GateConfig.model_validate(
        {"budgets": {"latency_p95": "+20%", "cost_per_question_usd": 0.002, "judge_cost_usd": 5}}
    )
    result = compare(base, head, gate=gate)
    assert result.regressions == () and result.verdict == "fail"
    by_name = {b.name: b for b in result.budgets}
    assert by_name["latency_p95"].breached and by_name["latency_p95"].allowed == pytest.approx(1.2)
    assert by_name["cost_per_question_usd"].breached and by_name[
        "cost_per_question_usd"
    ].value == pytest.approx(0.003)
    assert not by_name["judge_cost_usd"].breached
    text = render_markdown(head, result)
    assert text.startswith("## rag-ci: ❌ 2 budgets exceeded")
    assert "| latency_p95 | \\+20% | 1000 ms | 1500 ms | 1200 ms | ❌ over budget |" in text
    assert compare(base, head, fail_on="never", gate=gate).verdict == "pass"


def test_a_relative_budget_without_a_baseline_value_is_not_checked():
    base, head = run(question("A", cost=0.0)), run(question("A", cost=0.5))
    gate = GateConfig.model_validate({"budgets": {"cost_per_question_usd": "+10%"}})
    (check,) = compare(base, head, gate=gate).budgets
    assert check.allowed is None and not check.breached


def test_significant_drop_gates_on_the_overall_test_not_on_single_regressions():
    base = run(*[question(f"Q{i}") for i in range(40)])
    one_down = run(question("Q0", "fail"), *[question(f"Q{i}") for i in range(1, 40)])
    assert compare(base, one_down, fail_on="any_regression").verdict == "fail"
    assert compare(base, one_down, fail_on="significant_drop").verdict == "pass"  # McNemar p = 1
    many_down = run(
        *[question(f"Q{i}", "fail") for i in range(10)], *[question(f"Q{i}") for i in range(10, 40)]
    )
    result = compare(base, many_down, fail_on="significant_drop")
    assert result.significant_drop and result.verdict == "fail"  # p = 2·½¹⁰ ≈ 0.002
    assert "significant pass-rate drop" in render_markdown(many_down, result).splitlines()[0]


def test_significance_is_reported_per_metric_corpus_and_tag():
    base = run(
        question("A", corpora=("x",), tags=("t",), metrics=[metric("mrr", 0.9)]),
        question("B", corpora=("y",)),
    )
    head = run(
        question("A", "fail", corpora=("x",), tags=("t",), metrics=[metric("mrr", 0.1)]),
        question("B", corpora=("y",)),
    )
    rows = {(r.scope, r.name): r.test for r in compare(base, head).significance}
    assert set(rows) == {("overall", ""), ("metric", "mrr"), ("corpus", "x"), ("corpus", "y"), ("tag", "t")}
    assert rows[("corpus", "x")].delta == -1.0 and rows[("corpus", "y")].delta == 0.0


@pytest.mark.parametrize("value", ["+20%", "15 %", 0.002, 5])
def test_budgets_accept_absolute_numbers_and_relative_percentages(value):
    assert GateConfig.model_validate({"budgets": {"latency_p95": value}}).budgets.latency_p95 == (
        value.strip() if isinstance(value, str) else value
    )


def test_a_malformed_budget_names_the_file_and_line():
    text = "questions: q.yml\ncorpora: {a: {}}\ntarget: {kind: python, entry: 'm:f'}\ngate:\n  budgets:\n    latency_p95: twenty\n"
    with pytest.raises(ValidationError) as excinfo:
        parse_config(text, "rag-ci.yml")
    assert "rag-ci.yml:6" in str(excinfo.value) and "+20%" in str(excinfo.value)
