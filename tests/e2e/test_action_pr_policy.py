"""End to end: a pull request cannot disarm its own gate (docs/gate.md).

The PR is evaluated under the baseline's recorded policy, whatever its rag-ci.yml says;
a baseline artifact that exists but cannot be read fails the check instead of passing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from action_harness import MERGE_BASE_SHA, pull_request_event, run_action

from fakes.fake_github import FakeGitHubServer
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow


def edit_config(workspace: Path, old: str, new: str) -> None:
    path = workspace / "rag-ci.yml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def comment(fake: FakeGitHubServer) -> str:
    [body] = [c["body"] for c in fake.comments.get(7, []) if COMMENT_MARKER in c["body"]]
    return body.replace("\\", "")  # markdown escapes aside


def test_a_pr_lowering_a_threshold_by_001_is_still_gated_by_the_baselines_and_sees_the_change_previewed(
    fake, workspace, token, baseline_json
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    edit_config(workspace, "keyword_coverage: {threshold: 0.6}", "keyword_coverage: {threshold: 0.59}")

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "fail" and int(run.outputs["regressions"]) > 0
    body = comment(fake)
    assert "This PR changes the gate:** keyword_coverage.threshold 0.6 → 0.59" in body
    assert "take effect once merged and re-baselined" in body
    results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
    assert results["meta"]["metric_thresholds"]["keyword_coverage"] == 0.6  # run under the baseline's policy


def test_a_pr_setting_gate_fail_on_never_still_fails_on_a_regression(fake, workspace, token, baseline_json):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    (workspace / "rag-ci.yml").write_text((workspace / "rag-ci.yml").read_text() + "gate: {fail_on: never}\n")

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "fail"
    assert "gate.fail_on any_regression → never" in comment(fake)


@pytest.mark.parametrize("content", [b'{"meta": {"schema_version": 1}, "questions": [', b"\x00\xff not json"])
def test_a_corrupt_baseline_artifact_fails_the_check_with_the_cause(fake, workspace, token, content):
    fake.add_baseline_artifact({"results.json": content}, head_sha=MERGE_BASE_SHA)

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "The baseline is unusable" in run.summary and "not valid JSON" in run.summary
    assert "rebaseline: true" in run.summary
    assert not (workspace / "rag-ci-output" / "results.json").exists()  # stopped before replaying


def test_an_artifact_without_results_json_is_not_a_bootstrap(fake, workspace, token):
    fake.add_baseline_artifact({"other.txt": "hello"}, head_sha=MERGE_BASE_SHA)

    run = run_action(fake, workspace, event_name="pull_request", event=pull_request_event(), token=token)

    assert run.returncode == 2, run.log
    assert "holds no results.json" in run.summary
