"""The comparison as JUnit XML: what every CI renders (GitLab's merge-request test widget,
Jenkins, Azure DevOps, CircleCI, Buildkite), beyond GitHub's pull-request page.

One test case per question, named by its id, in one test suite per corpus (a question routed
to several corpora is in the suite `du1+du2`). A question that fails the gate — a regression,
a question that got worse, a routing leak — is a `<failure>` whose message is the report row's
one-line why and whose body holds the before and after; a question that errors now is an
`<error>`; every other question passes. Accepted regressions and gains pass with properties
(`<id>.accepted`, `<id>.gain`) on their suite, because the JUnit schema Jenkins validates has
no properties on a test case; the same line is the test case's `<system-out>`. A breached
budget is a `<failure>` in the suite `rag-ci budgets`. docs/other-ci.md says how GitLab and
Jenkins read it.

Pure: the runs in, one string out. Every text is untrusted (ids, answers, reasons): the XML
serialiser escapes markup, and the characters XML 1.0 cannot hold at all (NUL and the other
C0 controls but tab and newlines, U+FFFE/U+FFFF, lone surrogates) are removed first; bidi and
zero-width controls are written as visible `<U+202E>`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rag_ci.core.base.text import INVISIBLE
from rag_ci.core.comparison.budgets import BudgetCheck
from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.reporting.deltas import ms_text
from rag_ci.core.reporting.rows import leak_words, metrics_cell, noise_words, why_cell
from rag_ci.core.results import QuestionResult, RunResult

__all__ = ["BUDGET_SUITE", "JUNIT_FILE", "render_junit", "xml_text"]

JUNIT_FILE = "junit.xml"  # beside results.json, when asked (`rag-ci run --junit`, the action's `junit` input)
BUDGET_SUITE = "rag-ci budgets"  # a space: never a corpus's name
ANSWER_CHARS = 2000  # of each answer in a failure's body; the HTML report has them whole
# Not a character of XML 1.0 (https://www.w3.org/TR/xml/#charsets): removed, there is no escape.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
GATING_KINDS = {"regressions": "regression", "worse": "worse", "leaks": "routing leak"}


def xml_text(text: object) -> str:
    """Untrusted text made fit for XML: impossible characters removed, hiding ones made visible."""
    cleaned = _NOT_XML.sub("", str(text))
    return INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", cleaned)


@dataclass
class _Case:
    name: str
    seconds: float
    outcome: str = "pass"  # pass | failure | error
    kind: str = ""  # the failure's or error's type
    message: str = ""
    body: str = ""
    out: str = ""  # <system-out>: what an accepted regression or a gain says
    properties: list[tuple[str, str]] = field(default_factory=list)


def render_junit(head: RunResult, comparison: Comparison | None, *, name: str = "rag-ci") -> str:
    """The JUnit XML report of `head` (compared with the baseline when `comparison` is given)."""
    changes = _changes_by_id(comparison)
    suites: dict[str, list[_Case]] = {}
    for question in head.questions:
        suite = "+".join(question.corpora) or "(no corpus)"
        suites.setdefault(suite, []).append(_question_case(question, changes.get(question.id)))
    if comparison is not None and comparison.budgets:
        suites[BUDGET_SUITE] = [_budget_case(check) for check in comparison.budgets]
    root = ET.Element("testsuites", name=xml_text(name))
    for suite_name, cases in suites.items():
        root.append(_suite(suite_name, cases))
    _count(root, root.findall("testsuite"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _changes_by_id(comparison: Comparison | None) -> dict[str, tuple[str, QuestionChange, str]]:
    """Question id -> (what the comparison says of it, its change, the accepted reasons)."""
    if comparison is None:
        return {}
    found: dict[str, tuple[str, QuestionChange, str]] = {}
    for change in comparison.gains:
        found[change.id] = ("gain", change, "")
    for accepted in comparison.accepted:
        found[accepted.change.id] = ("accepted", accepted.change, "; ".join(accepted.reasons))
    for attribute, kind in GATING_KINDS.items():
        for change in getattr(comparison, attribute):
            found[change.id] = (kind, change, "")
    return found


def _question_case(question: QuestionResult, found: tuple[str, QuestionChange, str] | None) -> _Case:
    case = _Case(name=question.id, seconds=question.latency_s or 0.0)
    if question.verdict != "pass":  # a question failing on both runs passes the gate: said here
        case.properties.append((f"{question.id}.verdict", question.verdict))
    if question.verdict == "error":
        case.outcome, case.kind = "error", "error"
        case.message = _one_line(question.error or "the question errored")
        case.body = case.message + ("\n\n" + _before_after(found[1]) if found else "")
        return case
    if found is None:
        if question.verdict == "routing_error":  # a leak gates without a baseline too
            case.outcome, case.kind = "failure", "routing leak"
            case.message = f"leaked: contexts from {', '.join(question.leaks) or 'another corpus'}"
            case.body = case.message
        return case
    kind, change, reasons = found
    if kind in GATING_KINDS.values():
        case.outcome = "failure"
        case.kind = "routing leak" if change.new_verdict == "routing_error" else kind
        case.message = _one_line(why_cell(change) or metrics_cell(change))
        case.body = f"{case.kind}: {case.message}\n\n{_before_after(change)}"
    elif kind == "accepted":
        case.out = f"accepted regression ({metrics_cell(change)}): {reasons}"
        case.properties.append((f"{question.id}.accepted", reasons))
    else:
        noise = noise_words(change)
        case.out = f"gain: {change.old_verdict} → {change.new_verdict}" + (f" ({noise})" if noise else "")
        case.properties.append((f"{question.id}.gain", case.out.removeprefix("gain: ")))
    return case


def _before_after(change: QuestionChange) -> str:
    """The failure's body: the verdicts, the metrics that crossed, sources and answers, before → after."""
    lines = [
        f"before: {change.old_verdict or 'new question'}{_latency(change.old_latency_s)}",
        f"after:  {change.new_verdict}{_latency(change.new_latency_s)}",
        f"metrics: {metrics_cell(change)}",
    ]
    if change.new_verdict == "routing_error":
        lines.append(leak_words(change))
    if change.old_sources or change.new_sources:
        lines += [f"sources before: {', '.join(change.old_sources) or '–'}"]
        lines += [f"sources after:  {', '.join(change.new_sources) or '–'}"]
    for label, answer in (("answer before", change.old_answer), ("answer after", change.answer)):
        if answer is not None:
            cut = answer[:ANSWER_CHARS] + ("…" if len(answer) > ANSWER_CHARS else "")
            lines.append(f"{label}:\n{cut}")
    return "\n".join(lines)


def _latency(seconds: float | None) -> str:
    return "" if seconds is None else f" ({ms_text(seconds)[1]})"


def _budget_case(check: BudgetCheck) -> _Case:
    case = _Case(name=check.name, seconds=0.0)
    value, allowed, baseline = (_measure(v, check.unit) for v in (check.value, check.allowed, check.baseline))
    words = f"{check.name} {value}, limit {check.limit} (allowed {allowed}; baseline {baseline})"
    if check.breached:
        case.outcome, case.kind, case.message = "failure", "budget", f"over budget: {words}"
        case.body = case.message
    else:
        case.out = ("above the limit but within noise: " if check.within_noise else "within budget: ") + words
    return case


def _measure(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    return (
        ms_text(value)[1]
        if unit == "s"
        else f"${value:.6f}".rstrip("0").rstrip(".")
        if unit
        else f"{value:g}"
    )


def _suite(name: str, cases: Sequence[_Case]) -> ET.Element:
    suite = ET.Element("testsuite", name=xml_text(name))
    properties = [p for case in cases for p in case.properties]
    if properties:
        holder = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(holder, "property", name=xml_text(key), value=xml_text(value))
    for case in cases:
        element = ET.SubElement(
            suite,
            "testcase",
            name=xml_text(case.name),
            classname=xml_text(f"rag-ci.{name}"),
            time=_time(case.seconds),
        )
        if case.outcome != "pass":
            detail = ET.SubElement(
                element, case.outcome, type=xml_text(case.kind), message=xml_text(case.message)
            )
            detail.text = xml_text(case.body)
        if case.out:
            ET.SubElement(element, "system-out").text = xml_text(case.out)
    _count(suite, [suite])
    return suite


def _count(element: ET.Element, suites: Iterable[ET.Element]) -> None:
    """tests, failures, errors, skipped and time of `element`, summed over the test cases of `suites`."""
    cases = [case for suite in suites for case in suite.iter("testcase")]
    element.set("tests", str(len(cases)))
    element.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    element.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    if element.tag == "testsuite":  # the schema's <testsuites> has no `skipped`
        element.set("skipped", "0")
    element.set("time", _time(sum(float(c.get("time") or 0) for c in cases)))


def _time(seconds: float) -> str:
    return f"{max(seconds, 0.0):.3f}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
