"""`rag-ci compare --format junit` and `rag-ci run --junit`: the JUnit XML any CI reads, valid
against the JUnit schema (tests/fixtures/junit/junit.xsd), one failure per regression."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner
from junit_schema import Schema

from builders import metric, question, run
from rag_ci.cli import cli
from rag_ci.files.results_file import save_results

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_compare_writes_junit_with_one_failure_per_regression(tmp_path):
    hit = lambda score: [metric("hit_at_k", score, 1.0)]
    base = run(*(question(f"Q{i}", metrics=hit(1.0), corpora=("du1",)) for i in range(4)))
    head = run(
        question("Q0", "fail", metrics=hit(0.0), corpora=("du1",)),
        question("Q1", "fail", metrics=hit(0.0), corpora=("du1",)),
        question("Q2", metrics=hit(1.0), corpora=("du1",)),
        question("Q3", metrics=hit(1.0), corpora=("du1",)),
    )
    save_results(tmp_path / "base.json", base)
    save_results(tmp_path / "head.json", head)

    done = invoke(
        "compare",
        tmp_path / "base.json",
        tmp_path / "head.json",
        "--format",
        "junit",
        "-o",
        tmp_path / "junit.xml",
    )

    assert done.exit_code == 1, done.output  # the gate fails, as with any format
    xml = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    assert Schema.read().problems(xml) == []
    failed = [c.get("name") for c in ET.fromstring(xml).iter("testcase") if c.find("failure") is not None]
    assert failed == ["Q0", "Q1"]
    printed = invoke("compare", tmp_path / "base.json", tmp_path / "head.json", "--format", "junit")
    assert printed.output.rstrip("\n") == xml.rstrip("\n")  # stdout holds the same document


def test_run_with_junit_writes_it_beside_results_json(tiny_project, tmp_path):
    config = tiny_project(f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}']}}\n")
    out = tmp_path / "out" / "results.json"

    done = invoke("run", "--config", config, "-o", out, "--no-progress", "--junit", "--format", "md")

    assert done.exit_code == 0, done.output
    xml = (out.parent / "junit.xml").read_text(encoding="utf-8")
    assert Schema.read().problems(xml) == []
    ids = [q["id"] for q in json.loads(out.read_text())["questions"]]
    assert [c.get("name") for c in ET.fromstring(xml).iter("testcase")] == ids
    assert f"JUnit report in {out.parent / 'junit.xml'}" in done.output
