"""examples/.gitlab-ci.yml on a merge request, its own `script:` step run as the CI runs it
(bash -eo pipefail) with the real `rag-ci`, against FakeGitLabServer (the baseline artifact and
the notes API): the first push posts one note and writes a JUnit report with one failure per
regression, valid against the JUnit schema; the next push edits that note."""

from __future__ import annotations

import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from junit_schema import Schema
from ruamel.yaml import YAML
from test_ci_recipes_baseline import run_bash, stub

from builders import EXAMPLES, REPO
from fakes.fake_gitlab import FakeGitLabServer
from rag_ci.cli import cli
from rag_ci.gitlab.notes import NOTE_MARKER

FAKES = Path(__file__).resolve().parents[1] / "fakes"
pytestmark = pytest.mark.slow  # starts the CLI as processes, and servers

TOKEN = "glpat-Rb4Nq8Ws2Ex6Tz1Y"
# TINY_RAG_BROKEN=1: the RAG answers corpus b wrongly, a regression (tests/fakes/tiny_rag.py).
TARGET = (
    f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}'], pass_env: [TINY_RAG_BROKEN]}}\n"
)


def recipe_step() -> str:
    script = YAML(typ="safe").load((EXAMPLES / ".gitlab-ci.yml").read_text())["rag-ci"]["script"]
    [step] = [s for s in script if "jobs/artifacts" in s]
    return step


def merge_request_push(project: Path, gitlab: FakeGitLabServer, **env: str):
    shutil.rmtree(project / "rag-ci-output", ignore_errors=True)  # a fresh checkout each push
    (project / "baseline.json").unlink(missing_ok=True)
    return run_bash(
        recipe_step(),
        project,
        {
            "PYTHONPATH": str(REPO),
            "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
            "HOME": str(project),
            "CI_MERGE_REQUEST_IID": "5",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
            "CI_DEFAULT_BRANCH": "main",
            "CI_API_V4_URL": gitlab.url,
            "CI_PROJECT_ID": "42",
            "CI_PROJECT_URL": "https://gitlab.example/group/rag",
            "CI_JOB_TOKEN": "job-token-A1b2C3d4",
            "RAG_CI_GITLAB_TOKEN": TOKEN,
            **env,
        },
    )


def regressed(baseline: dict, results: dict) -> set[str]:
    before = {q["id"]: q["verdict"] for q in baseline["questions"]}
    return {q["id"] for q in results["questions"] if before.get(q["id"]) == "pass" and q["verdict"] != "pass"}


def test_the_gitlab_recipe_notes_the_merge_request_once_and_edits_it_on_the_next_push(tiny_project, tmp_path):
    tiny_project(TARGET)
    stub(tmp_path / "bin", "rag-ci", f'#!/bin/sh\nexec "{sys.executable}" -m rag_ci.cli "$@"\n')
    made = CliRunner().invoke(
        cli,
        ["run", "--config", str(tmp_path / "rag-ci.yml"), "-o", str(tmp_path / "main.json"), "--no-progress"],
    )
    assert made.exit_code == 0, made.output
    baseline = json.loads((tmp_path / "main.json").read_text())

    with FakeGitLabServer() as gitlab:
        gitlab.job_token = "job-token-A1b2C3d4"
        gitlab.add_artifact(
            "main", "rag-ci-output/results.json", "rag-ci", (tmp_path / "main.json").read_bytes()
        )
        bot = gitlab.add_user(TOKEN, "project_42_bot")

        first = merge_request_push(tmp_path, gitlab, TINY_RAG_BROKEN="1")

        assert first.returncode == 1, first.stdout + first.stderr  # the regression fails the job
        [note] = gitlab.notes[5]
        assert note["author"] == bot and note["body"].startswith(f"{NOTE_MARKER}\n## rag-ci: ❌")
        assert "merge-request note: https://gitlab.example/group/rag/-/merge_requests/5#note_" in first.stderr
        xml = (tmp_path / "rag-ci-output" / "junit.xml").read_text(encoding="utf-8")
        assert Schema.read().problems(xml) == []
        failures = {
            c.get("name") for c in ET.fromstring(xml).iter("testcase") if c.find("failure") is not None
        }
        results = json.loads((tmp_path / "rag-ci-output" / "results.json").read_text())
        assert failures == regressed(baseline, results) and failures  # one failure per regression
        assert TOKEN not in first.stdout + first.stderr

        second = merge_request_push(tmp_path, gitlab)  # fixed

        assert second.returncode == 0, second.stdout + second.stderr
        [edited] = gitlab.notes[5]
        assert edited["id"] == note["id"] and edited["body"].startswith(f"{NOTE_MARKER}\n## rag-ci: ✅")
        assert gitlab.routes().count("POST /api/v4/projects/{n}/merge_requests/{n}/notes") == 1


def test_the_recipe_publishes_nothing_outside_a_merge_request(tiny_project, tmp_path):
    """A branch pipeline (no CI_MERGE_REQUEST_IID) gates as before and calls no notes API."""
    tiny_project(TARGET)
    stub(tmp_path / "bin", "rag-ci", f'#!/bin/sh\nexec "{sys.executable}" -m rag_ci.cli "$@"\n')
    with FakeGitLabServer() as gitlab:
        gitlab.job_token = "job-token-A1b2C3d4"
        done = merge_request_push(tmp_path, gitlab, CI_MERGE_REQUEST_IID="", RAG_CI_NO_BASELINE_YET="true")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r.path for r in gitlab.requests if "/notes" in r.path or r.path.endswith("/user")] == []
    assert os.path.isfile(tmp_path / "rag-ci-output" / "junit.xml")
