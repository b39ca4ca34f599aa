"""`compare --format junit`'s XML (rag_ci.core.reporting.junit): one test case per question,
a suite per corpus, the gate's failures as <failure>, errors as <error>, valid against the
JUnit schema Jenkins reads (tests/fixtures/junit/junit.xsd), and inert whatever the text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from junit_schema import Schema

from builders import metric, question, run
from rag_ci.core.comparison.budgets import BudgetCheck
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.junit import BUDGET_SUITE, render_junit
from rag_ci.gate import Acceptance, compare_runs

SCHEMA = Schema.read()


def hit(score: float):
    return [metric("hit_at_k", score, 1.0)]


BASE = run(
    question("R1", metrics=hit(1.0), corpora=("du1",)),
    question("R2", metrics=hit(1.0), corpora=("du2",)),
    question("G1", "fail", metrics=hit(0.0), corpora=("du1",)),
    question("E1", metrics=hit(1.0), corpora=("du1",)),
    question("S1", metrics=hit(1.0), corpora=("du1", "du2")),
)
HEAD = run(
    question("R1", "fail", metrics=hit(0.0), corpora=("du1",), answer="now wrong"),
    question("R2", "fail", metrics=hit(0.0), corpora=("du2",)),
    question("G1", metrics=hit(1.0), corpora=("du1",)),
    question("E1", "error", corpora=("du1",), error="target timed out after 30 s"),
    question("S1", metrics=hit(1.0), corpora=("du1", "du2")),
)


def cases(xml: str) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in ET.fromstring(xml).iter("testcase")}


def test_one_case_per_question_grouped_by_corpus_failures_and_errors_counted():
    xml = render_junit(HEAD, compare(BASE, HEAD))
    assert SCHEMA.problems(xml) == []
    root = ET.fromstring(xml)
    suites = {s.get("name"): [c.get("name") for c in s.iter("testcase")] for s in root.iter("testsuite")}
    assert suites == {"du1": ["R1", "G1", "E1"], "du2": ["R2"], "du1+du2": ["S1"]}
    by_id = cases(xml)
    assert [by_id[q].find("failure") is not None for q in ("R1", "R2", "G1", "E1", "S1")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert by_id["E1"].find("error").get("message") == "target timed out after 30 s"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "1")
    du1 = next(s for s in root.iter("testsuite") if s.get("name") == "du1")
    assert (du1.get("tests"), du1.get("failures"), du1.get("errors")) == ("3", "1", "1")


def test_a_failure_carries_the_rows_why_as_message_and_the_before_and_after_in_its_body():
    failure = cases(render_junit(HEAD, compare(BASE, HEAD)))["R1"].find("failure")
    assert failure.get("type") == "regression"
    assert failure.get("message") == "hit_at_k=0.0"  # the metric's own reason, as the report row says it
    body = failure.text
    assert body.startswith("regression: hit_at_k=0.0")
    assert "before: pass" in body and "after:  fail" in body and "metrics: hit@k 1→0" in body
    assert "answer before:\nok" in body and "answer after:\nnow wrong" in body


def test_accepted_regressions_and_gains_pass_with_properties_on_their_suite():
    accepted = Acceptance(id="R2", question_hash=HEAD.questions[1].question_hash, reason="intended, PR #12")
    outcome = compare_runs(BASE, HEAD, accepted=[accepted])
    xml = render_junit(outcome.head, outcome.comparison)
    assert SCHEMA.problems(xml) == []
    by_id = cases(xml)
    assert by_id["R2"].find("failure") is None and "intended, PR #12" in by_id["R2"].find("system-out").text
    assert by_id["G1"].find("failure") is None and by_id["G1"].find("system-out").text.startswith(
        "gain: fail → pass"
    )
    properties = {p.get("name"): p.get("value") for p in ET.fromstring(xml).iter("property")}
    assert properties["R2.accepted"] == "intended, PR #12"
    assert properties["G1.gain"].startswith("fail → pass")
    assert properties["R1.verdict"] == "fail" and "S1.verdict" not in properties  # passing: nothing to say


def test_a_routing_leak_is_a_failure_with_and_without_a_baseline():
    leaking = run(question("L1", "routing_error", corpora=("du1",), leaks=("du3/secret.md",)))
    alone = cases(render_junit(leaking, None))["L1"].find("failure")
    assert alone.get("type") == "routing leak" and "du3/secret.md" in alone.get("message")
    compared = cases(render_junit(leaking, compare(run(question("L1", corpora=("du1",))), leaking)))["L1"]
    assert compared.find("failure").get("type") == "routing leak"  # a regression, by leaking
    assert compared.find("failure").text.startswith("routing leak: leaked: contexts from du3/secret.md")


@pytest.mark.parametrize("breached", [True, False])
def test_a_budget_is_a_case_of_its_own_suite_failing_only_when_breached(breached):
    check = BudgetCheck(
        "latency_p95", "+20%", baseline=0.1, value=0.5 if breached else 0.11, allowed=0.12, bound=None
    )
    xml = render_junit(HEAD, replace(compare(BASE, HEAD), budgets=(check,)))
    assert SCHEMA.problems(xml) == []
    suite = next(s for s in ET.fromstring(xml).iter("testsuite") if s.get("name") == BUDGET_SUITE)
    [case] = suite.iter("testcase")
    assert case.get("name") == "latency_p95"
    assert (case.find("failure") is not None) is breached
    if breached:
        assert case.find("failure").get("message") == (
            "over budget: latency_p95 500 ms, limit +20% (allowed 120 ms; baseline 100 ms)"
        )


HOSTILE = 'x\x00\x01\x1b[31m <script>&"]]></failure><failure>\u202egnp.exe\ud800 \ufffe end'


def test_hostile_text_is_escaped_and_xml_illegal_characters_removed():
    bad = question("Q<&>\"'\x07", "fail", metrics=hit(0.0), corpora=("du<1>",), answer=HOSTILE)
    bad.metrics["hit_at_k"].reason = HOSTILE
    base = run(question("Q<&>\"'\x07", metrics=hit(1.0), corpora=("du<1>",), answer=HOSTILE))
    head = run(bad)
    xml = render_junit(head, compare(base, head))
    assert SCHEMA.problems(xml) == []  # well-formed (ET.fromstring) and valid
    assert "\x00" not in xml and "\x1b" not in xml and "\ufffe" not in xml and "\ud800" not in xml
    [case] = ET.fromstring(xml).iter("testcase")
    assert case.get("name") == "Q<&>\"'"  # the id as it is, minus what XML cannot hold
    failure = case.find("failure")
    assert len(case.findall("failure")) == 1  # the text could not close the element
    assert "<U+202E>gnp.exe" in failure.get("message")  # a bidi override is shown, not obeyed
    assert '<script>&"]]></failure><failure>' in failure.text  # as text, escaped on the wire
    assert "<script>" not in xml


def test_the_shipped_schema_catches_what_jenkins_would_refuse():
    """The validator is not a rubber stamp: the schema's rules fail documents that break them."""
    assert SCHEMA.problems('<testsuites><testsuite name="a" tests="1" failures="0"/></testsuites>') == [
        "/testsuites/testsuite[0]: required attribute errors missing"
    ]
    assert SCHEMA.problems(
        '<testsuites><testsuite name="a" tests="1" failures="0" errors="0">'
        '<testcase name="q"><properties/></testcase></testsuite></testsuites>'
    ) == ["/testsuites/testsuite[0]/testcase[0]: <properties> is not allowed in <testcase>"]
    assert SCHEMA.problems('<testsuites time="1.5s"/>') == [
        "/testsuites: time='1.5s' does not match SUREFIRE_TIME"
    ]
