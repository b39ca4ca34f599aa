"""Annotations: where each finding points (pure), and how a workflow command carries it."""

from __future__ import annotations

import io

from rag_ci.core.questionset.question_lines import question_lines
from rag_ci.core.reporting.annotations import Annotation, by_severity, validation_annotations
from rag_ci.github.workflow import Runner


def test_question_lines_are_the_lines_of_each_id_key_whatever_the_layout():
    text = "version: 1\nquestions:\n  - question: first?\n    id: A\n  - id: 'B'\n    question: b\n  - {id: C, question: c}\n"
    assert question_lines(text, "q.yml") == {"A": 4, "B": 5, "C": 7}
    assert question_lines("questions: [", "q.yml") == {}  # a file that no longer parses: no lines, no error


def test_validation_problems_keep_their_file_and_line_relative_to_the_workspace():
    problems = [
        "/ws/eval/questions.yml:12: question Q1: unknown doc_id 'x' (corpora: a)",
        "/ws/rag-ci.yml: no corpora: add a `corpora:` table",
        "something without a place",
    ]
    found = validation_annotations(problems, lambda p: p.removeprefix("/ws/"))
    assert [(a.path, a.line, a.message) for a in found] == [
        ("eval/questions.yml", 12, "question Q1: unknown doc_id 'x' (corpora: a)"),
        ("rag-ci.yml", None, "no corpora: add a `corpora:` table"),
        (None, None, "something without a place"),
    ]


def test_failures_come_before_warnings_in_the_order_found():
    found = [
        Annotation("warning", "w", "m"),
        Annotation("failure", "f1", "m"),
        Annotation("failure", "f2", "m"),
    ]
    assert [a.title for a in by_severity(found)] == ["f1", "f2", "w"]


def test_an_annotation_escapes_properties_and_data_by_their_own_rules():
    stream = io.StringIO()
    Runner(step_summary=None, github_output=None, in_actions=True, stream=stream).annotate(
        "error", "50% worse\nsecond line: a, b", title="Q:1, — regression", file="eval/q,1:x.yml", line=7
    )
    # Properties escape `:` and `,` too; the message only `%`, CR and LF.
    assert (
        stream.getvalue()
        == "::error file=eval/q%2C1%3Ax.yml,line=7,title=Q%3A1%2C — regression::50%25 worse%0Asecond line: a, b\n"
    )


def test_a_line_without_a_file_is_left_out():
    stream = io.StringIO()
    Runner(step_summary=None, github_output=None, in_actions=True, stream=stream).annotate(
        "warning", "m", title="t", line=3
    )
    assert stream.getvalue() == "::warning title=t::m\n"
