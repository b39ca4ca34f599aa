"""The README's first command on the embedded example: the gate passes, then catches regressions."""

import json
import shutil

import pytest
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("example") / "examples"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".index", "out"))
    return folder


def gate(example, output, env=None):
    args = [
        "run",
        "--config",
        str(example / "rag-ci.yml"),
        "--baseline",
        str(example / "baseline" / "results.json"),
        "--output",
        str(output),
        "--format",
        "json",
        "--no-progress",
    ]
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    return result, json.loads(result.output[result.output.index("{") :])


def test_committed_baseline_is_reproduced_and_the_gate_passes(example, tmp_path):
    result, report = gate(example, tmp_path / "r.json", env={"EXAMPLE_RAG_REGRESSION": ""})
    assert result.exit_code == 0 and report["verdict"] == "pass" and report["regressions"] == []
    head = json.loads((tmp_path / "r.json").read_text())
    base = json.loads((example / "baseline" / "results.json").read_text())
    assert [(q["id"], q["answer"]) for q in head["questions"]] == [
        (q["id"], q["answer"]) for q in base["questions"]
    ]
    assert head["aggregates"]["overall"]["n"] >= 30


def test_chunking_regression_fails_the_gate_with_per_question_regressions(example, tmp_path):
    result, report = gate(example, tmp_path / "r.json", env={"EXAMPLE_RAG_REGRESSION": "chunking"})
    assert result.exit_code == 1 and report["verdict"] == "fail"
    assert len(report["regressions"]) >= 4
    assert all(r["old_verdict"] == "pass" and r["new_verdict"] != "pass" for r in report["regressions"])


def test_routing_regression_is_caught_as_routing_errors(example, tmp_path):
    result, report = gate(example, tmp_path / "r.json", env={"EXAMPLE_RAG_REGRESSION": "routing"})
    assert result.exit_code == 1
    assert sum(1 for r in report["regressions"] if r["new_verdict"] == "routing_error") >= 4
    leaked = [
        q
        for q in json.loads((tmp_path / "r.json").read_text())["questions"]
        if q["verdict"] == "routing_error"
    ]
    assert all(q["leaks"] and q["metrics"] == {} for q in leaked)
