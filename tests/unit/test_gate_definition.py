"""The gate's definition (docs/gate.md): worse, routing leaks, carried baseline verdicts, broken runs."""

import json

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.carry import carry_forward
from rag_ci.core.comparison.compare import compare
from rag_ci.core.config import GateConfig
from rag_ci.core.reporting.render import render_html, render_markdown
from rag_ci.core.results import MetricResult
from rag_ci.core.scoring.verdict import broken_run_reason
from rag_ci.errors import BrokenRun

HIT = "hit_at_k"
KW = "keyword_coverage"


def judge_error(name="correctness"):
    return MetricResult(name=name, kind="judge", error="judge error: HTTP 500 (gave up after 4 attempts)")


def failing_on_keywords(qid="A", hit=1.0):
    """Already failing on keyword_coverage; hit@k decides whether it got worse."""
    return question(qid, "fail", metrics=[metric(HIT, hit, 1.0), metric(KW, 0.1, 0.6)])


# -- worse --------------------------------------------------------------------


def test_a_failing_question_that_now_leaks_is_worse_and_fails_the_gate():
    base = run(failing_on_keywords(), question("B"))
    head = run(question("A", "routing_error", leaks=["zzz"]), question("B"))
    result = compare(base, head)
    assert result.regressions == () and [c.id for c in result.worse] == ["A"]
    assert result.worse[0].worse_because == "now leaks: contexts from zzz"
    assert result.leaks == ()  # listed once, under worse
    assert result.verdict == "fail"


def test_a_failing_question_that_now_errors_is_worse_and_fails_the_gate():
    base = run(failing_on_keywords())
    head = run(question("A", "error", metrics=[metric(HIT, 1.0, 1.0), judge_error()]))
    result = compare(base, head)
    assert [c.id for c in result.worse] == ["A"] and result.verdict == "fail"
    assert result.worse[0].worse_because.startswith("now errors: correctness: judge error: HTTP 500")


def test_a_failing_question_that_loses_a_metric_that_passed_is_worse_and_fails_the_gate():
    base = run(failing_on_keywords(hit=1.0))
    head = run(failing_on_keywords(hit=0.0))
    result = compare(base, head)
    assert [c.id for c in result.worse] == ["A"] and result.verdict == "fail"
    assert result.worse[0].worse_because == "lost hit_at_k 1.00 → 0.00 (passed on the baseline)"


def test_a_failing_question_that_stays_the_same_is_not_worse():
    result = compare(run(failing_on_keywords()), run(failing_on_keywords()))
    assert result.worse == () and result.verdict == "pass"


def test_worse_is_in_the_json_and_in_a_visible_section_of_the_comment():
    base = run(failing_on_keywords(hit=1.0), question("B"))
    head = run(failing_on_keywords(hit=0.0), question("B"))
    result = compare(base, head)
    assert [c["id"] for c in json.loads(json.dumps(result.to_dict(), default=str))["worse"]] == ["A"]
    md = render_markdown(head, result)
    assert md.startswith("## rag-ci: ❌ 1 worse\n")
    section = md.index("### Worse (1): already failing, now worse")
    assert "<details>" not in md[:section]  # not collapsed
    # the drop in its failing cell, once
    assert "hit&#64;k 1→0 | these passed on the baseline" in md[section:]
    assert "Worse: already failing, now worse (1)" in render_html(head, result)


def test_fail_on_never_reports_worse_but_passes():
    result = compare(run(failing_on_keywords(hit=1.0)), run(failing_on_keywords(hit=0.0)), fail_on="never")
    assert len(result.worse) == 1 and result.verdict == "pass"
    assert "(gate disabled)" in render_markdown(run(failing_on_keywords(hit=0.0)), result)


# -- routing leaks always gate -------------------------------------------------


@pytest.mark.parametrize(
    "base_record,why",
    [
        (None, "a new question"),
        (question("A", hash_="old"), "a question whose content changed"),
        (question("A", "routing_error", leaks=["zzz"]), "a question that already leaked on the baseline"),
        (question("A", "error"), "a question the baseline errored on"),
    ],
)
def test_a_routing_leak_fails_the_gate_on_any_question(base_record, why):
    base = run(*([base_record] if base_record else []), question("B"))
    head = run(question("A", "routing_error", leaks=["zzz"]), question("B"))
    result = compare(base, head)
    assert [c.id for c in result.leaks] == ["A"], why
    assert result.verdict == "fail", why
    assert "### Routing leaks" in render_markdown(head, result)


def test_a_routing_leak_fails_the_gate_under_the_significant_drop_policy_too():
    base = run(question("A"), *[question(f"P{i}") for i in range(20)])
    head = run(question("A", "routing_error", leaks=["zzz"]), *[question(f"P{i}") for i in range(20)])
    result = compare(base, head, fail_on="significant_drop")
    assert not result.significant_drop and result.verdict == "fail"
    assert render_markdown(head, result).startswith("## rag-ci: ❌ 1 routing leak\n")


# -- carried baseline verdicts ---------------------------------------------------


def test_a_baseline_that_errored_with_a_carried_pass_makes_a_failure_now_a_regression():
    previous = run(question("A", metrics=[metric(HIT, 1.0, 1.0)]), sha="good111")
    outage = run(question("A", "error", metrics=[judge_error()]), sha="down222")
    baseline = carry_forward(previous, outage)
    head = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]))

    result = compare(baseline, head)

    assert [c.id for c in result.regressions] == ["A"] and result.verdict == "fail"
    (change,) = result.regressions
    assert change.baseline_carried and change.carried_from_sha == "good111" and change.old_verdict == "pass"
    assert [(m.name, m.old, m.new) for m in change.metrics] == [(HIT, 1.0, 0.0)]
    md = render_markdown(head, result)
    assert "The baseline errored on 1 question; compared with the last known good verdict: A." in md
    assert "| A<br><sub>compared with its last good verdict (good111)</sub> |" in md


def test_the_last_good_verdict_keeps_being_carried_through_consecutive_outages():
    good = run(question("A", "fail", metrics=[metric(HIT, 1.0, 1.0), metric(KW, 0.1, 0.6)]), sha="good111")
    first = carry_forward(good, run(question("A", "error"), sha="down222"))
    second = carry_forward(first, run(question("A", "error"), sha="down333"))
    (record,) = second.questions
    assert (
        record.carried is not None
        and record.carried.verdict == "fail"
        and record.carried.from_sha == "good111"
    )
    # ...and a still-failing question that now leaks is worse against it.
    result = compare(second, run(question("A", "routing_error", leaks=["zzz"])))
    assert [c.id for c in result.worse] == ["A"]


def test_nothing_is_carried_onto_a_changed_question_nor_from_a_broken_run():
    previous = run(question("A"), question("B"), sha="good111")
    outage = run(question("A", "error", hash_="edited"), question("B", "error"), sha="down222")
    carried = carry_forward(previous, outage).by_id()
    assert carried["A"].carried is None and carried["B"].carried is not None
    broken = previous.model_copy(
        update={"meta": previous.meta.model_copy(update={"broken": "40/40 questions errored"})}
    )
    assert carry_forward(broken, outage) is outage


def test_a_metric_defined_differently_now_is_left_out_of_the_carried_verdict():
    thresholds = {HIT: 1.0, KW: 0.6}
    previous = run(
        question("A", "fail", metrics=[metric(HIT, 1.0, 1.0), metric(KW, 0.5, 0.6)]),
        thresholds=thresholds,
        sha="good111",
    )
    # keyword_coverage redefined
    outage = run(question("A", "error"), thresholds={HIT: 1.0, KW: 0.4}, sha="down222")
    (record,) = carry_forward(previous, outage).questions
    assert set(record.carried.metrics) == {HIT} and record.carried.verdict == "pass"


def test_questions_that_did_not_error_carry_nothing():
    previous = run(question("A"), sha="good111")
    head = run(question("A", "fail"))
    assert carry_forward(previous, head) is head


def test_a_baseline_error_with_nothing_to_carry_is_listed_visibly_and_does_not_gate():
    base = run(question("A", "error"), question("B", "error"))
    head = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]), question("B"))
    result = compare(base, head)
    assert [c.id for c in result.no_baseline_verdict] == ["A", "B"]
    assert result.regressions == () and result.gains == () and result.verdict == "pass"
    md = render_markdown(head, result)
    section = md.index("### No usable baseline verdict")
    assert "<details>" not in md[:section] and "| A |" in md[section:]


# -- broken runs ------------------------------------------------------------------


def test_the_error_share_counts_errored_questions_and_judge_metric_errors_but_not_leaks():
    questions = [
        question("E1", "error"),
        question("E2", "error", metrics=[metric(HIT, 1.0, 1.0), judge_error()]),
        question("L", "routing_error", leaks=["zzz"]),
        question("P1"),
        question("P2"),
        question("P3"),
        question("P4"),
        question("P5"),
        question("P6"),
        question("P7"),
    ]
    assert broken_run_reason(questions, 0.2) is None  # 2/10 is not above 20%
    reason = broken_run_reason(questions, 0.1)
    assert reason is not None and reason.startswith(
        "2/10 questions errored (20%, above gate.max_error_rate 10%)"
    )
    assert GateConfig().max_error_rate == 0.2


def test_the_reason_names_the_most_common_error():
    questions = [question(f"Q{i}", "error", metrics=[judge_error()]) for i in range(3)] + [
        question("T", "error", error="time-out")
    ]
    reason = broken_run_reason(questions, 0.2)
    assert reason.endswith("most common error (3×): judge error: HTTP 500 (gave up after 4 attempts)")


def test_compare_refuses_a_broken_baseline_and_a_broken_run():
    good = run(question("A"))
    broken = good.model_copy(
        update={"meta": good.meta.model_copy(update={"broken": "4/4 questions errored"})}
    )
    with pytest.raises(
        BrokenRun, match="The baseline .* is a broken run, not a result: 4/4 questions errored"
    ):
        compare(broken, good)
    with pytest.raises(BrokenRun, match="This run is broken"):
        compare(good, broken)


def test_a_broken_run_report_says_it_is_not_a_result():
    good = run(question("A", "error"))
    broken = good.model_copy(
        update={"meta": good.meta.model_copy(update={"broken": "1/1 questions errored"})}
    )
    assert render_markdown(broken).startswith("## rag-ci: ⛔ broken run: not a result")


# -- known-flaky marks must be vouched for -----------------------------------------


def test_a_history_mark_counts_only_when_vouched_for_and_the_outcome_says_when_one_was_ignored():
    from rag_ci.gate import History, compare_runs

    genuine = json.dumps({"pass_rate": 1.0, "flaky": {"A": [1, 4]}, "git_sha": "1"})
    forged = json.dumps({"pass_rate": 1.0, "flaky": {"B": [1, 4]}, "git_sha": "2"})
    plain = json.dumps({"pass_rate": 1.0, "flaky": {}, "git_sha": "3"})
    text = "\n".join([genuine, forged, plain]) + "\n"
    asked: list[set[str]] = []

    def vouch(lines: set[str]) -> set[str]:
        asked.append(lines)
        return {genuine}

    history = History.of_text(text)
    assert set(history.known_flaky() or {}) == {"A", "B"}  # no vouch: the user's own file (CLI --history)
    vouched = history.with_vouched(vouch(history.marked))
    assert set(vouched.known_flaky() or {}) == {"A"} and vouched.ignored_marks == 1
    assert asked == [{genuine, forged}]  # only the lines that mark a question are asked about

    base = run(question("A"), question("B"))
    head = run(
        question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
    )
    outcome = compare_runs(base, head, history=history.with_vouched(vouch(history.marked)))
    assert [c.id for c in outcome.comparison.regressions] == ["B"]
    [flaky] = outcome.comparison.flaky
    assert flaky.id == "A" and flaky.from_history and flaky.why.startswith("cleared by the history of main")
    assert any(
        "1 line(s) of the history mark questions as known-flaky but were not written by rag-ci" in n
        for n in outcome.notices
    )
