"""End to end: the action on pull_request events, against the example RAG and FakeGitHubServer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from action_harness import HEAD_SHA, MERGE_BASE_SHA, assert_token_never_leaked, pull_request_event, run_action

from fakes.fake_github import FakeGitHubServer
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow


def id_lines(questions: Path) -> dict[str, int]:
    """Question id -> the 1-based line of its `- id:` in questions.yml, read as text."""
    return {
        m[1].strip("'\""): n
        for n, line in enumerate(questions.read_text().splitlines(), 1)
        if (m := re.match(r"\s*- id: (.+?)\s*$", line))
    }


def our_comments(fake: FakeGitHubServer, pr: int = 7) -> list[dict]:
    return [c for c in fake.comments.get(pr, []) if COMMENT_MARKER in c["body"]]


def test_pr_with_regressions_posts_one_comment_annotates_and_fails(
    fake, workspace, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)

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
    regressions = int(run.outputs["regressions"])
    assert regressions > 0
    [comment] = our_comments(fake)
    body = comment["body"]
    assert body.startswith(COMMENT_MARKER)
    assert "regression" in body and "| question | corpus | failing | why |" in body
    assert "[workflow run](https://github.example/acme/rag/actions/runs/4242)" in body
    assert len(body) <= 65536
    assert "## rag-ci" in run.summary  # the same report in the step summary
    # Each annotation at the question's `- id:` line of questions.yml, the first 10 on the log ...
    lines = id_lines(workspace / "questions.yml")
    logged = re.findall(
        r"^::error file=questions\.yml,line=(\d+),title=(.+?) — regression::", run.stdout, re.M
    )
    assert len(logged) == min(regressions, 10)
    assert all(lines[qid] == int(line) for line, qid in logged)
    # ... and every one in the `rag-ci gate` check run on the PR's head commit.
    [check] = fake.check_runs.values()
    assert (
        check["name"] == "rag-ci gate" and check["head_sha"] == HEAD_SHA and check["conclusion"] == "failure"
    )
    failures = [a for a in check["annotations"] if a["annotation_level"] == "failure"]
    assert len(failures) == regressions + int(run.outputs["worse"])
    assert all(
        a["path"] == "questions.yml" and a["start_line"] == lines[a["title"].split(" — ")[0]]
        for a in failures
    )
    comparison = json.loads((workspace / "rag-ci-output" / "comparison.json").read_text())
    assert all(r["id"] in run.summary for r in comparison["regressions"])  # the job summary names every one
    assert run.outputs["comparison-path"] == "rag-ci-output/comparison.json"
    assert run.outputs["comment-url"] == comment["html_url"]
    assert run.outputs["results-path"] == "rag-ci-output/results.json"  # relative: valid on the runner too
    assert (workspace / "rag-ci-output" / "report.html").is_file()
    assert json.loads((workspace / "rag-ci-output" / "comparison.json").read_text())["verdict"] == "fail"
    # Every REST call of a PR run (docs/action.md lists them): 8 to the API, 1 to blob storage.
    assert fake.routes() == [
        "GET /repos/acme/rag/actions/artifacts",  # baseline candidates, by name
        "GET /repos/acme/rag/compare/{basehead}",  # the PR's merge-base
        "GET /repos/acme/rag/actions/runs/{n}",  # the candidate's run: successful, trusted
        "GET /repos/acme/rag/actions/artifacts/{n}/zip",  # 302 to the signed blob URL
        "GET /repos/acme/rag/contents/{path}",  # eval_history.jsonl on rag-ci-data, for the trend
        "GET /user",  # whose comment is ours (403 for GITHUB_TOKEN: the Actions bot)
        "GET /repos/acme/rag/issues/{n}/comments",  # find the sticky comment
        "POST /repos/acme/rag/issues/{n}/comments",  # first run: create it
        "POST /repos/acme/rag/check-runs",  # the `rag-ci gate` check run with every annotation
    ]
    assert len([r for r in fake.requests if r.path.startswith("/_blobs/")]) == 1
    assert_token_never_leaked(token, run, fake, tmp_path)


def test_rerun_edits_the_same_comment_even_past_the_first_page(
    fake, workspace, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    fake.add_comment(7, f"quoting the bot: {COMMENT_MARKER}", login="reviewer")  # not ours: never edited
    for i in range(120):  # our comment lands on the second page of the comments list
        fake.add_comment(7, f"discussion {i}", login="reviewer")

    first = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "routing"},
    )
    assert first.returncode == 1, first.log
    second = run_action(fake, workspace, event_name="pull_request", event=pull_request_event(), token=token)

    assert second.returncode == 0, second.log
    [comment] = [c for c in our_comments(fake) if c["user"]["login"] == "github-actions[bot]"]
    assert "no regression" in comment["body"]
    assert comment["updated_at"] != comment["created_at"]
    assert second.outputs["comment-url"] == first.outputs["comment-url"] == comment["html_url"]
    routes = fake.routes()
    assert routes.count("POST /repos/acme/rag/issues/{n}/comments") == 1
    assert routes.count("PATCH /repos/acme/rag/issues/comments/{n}") == 1
    pages = [
        r.query.get("page", "1")
        for r in fake.requests
        if r.route == "GET /repos/acme/rag/issues/{n}/comments"
    ]
    assert "2" in pages  # followed the Link header
    assert fake.comments[7][0]["body"] == f"quoting the bot: {COMMENT_MARKER}"
    assert_token_never_leaked(token, second, fake, tmp_path)


def test_pr_without_regression_passes_against_the_merge_base_baseline(
    fake, workspace, token, baseline_json, tmp_path
):
    # The newest artifact on main is from a later commit whose RAG was broken; the one
    # at the PR's merge-base is the right baseline, so the comparison shows no gains.
    broken = json.loads(baseline_json)
    for q in broken["questions"]:
        q["verdict"] = "fail"
    fake.add_baseline_artifact(
        {"results.json": baseline_json}, head_sha=MERGE_BASE_SHA, created_at="2025-01-01T00:00:00Z"
    )
    fake.add_baseline_artifact(
        {"results.json": json.dumps(broken)}, head_sha="9" * 40, created_at="2025-01-02T00:00:00Z"
    )

    run = run_action(fake, workspace, event_name="pull_request", event=pull_request_event(), token=token)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "pass"
    assert run.outputs["regressions"] == "0" and run.outputs["gains"] == "0"
    assert "no regression" in our_comments(fake)[0]["body"]
    blob_requests = [r for r in fake.requests if r.path.startswith("/_blobs/")]
    assert blob_requests and not any(r.had_authorization for r in blob_requests)  # token only to the API
    assert_token_never_leaked(token, run, fake, tmp_path)


def test_no_baseline_yet_is_a_passing_bootstrap(fake, workspace, token, baseline_json, tmp_path):
    # An artifact uploaded by a fork's run on a branch named `main` must not count.
    fake.add_baseline_artifact({"results.json": baseline_json}, from_fork=True)

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "bootstrap"
    body = our_comments(fake)[0]["body"]
    assert "bootstrap" in body and "no baseline" in body
    assert not any(r.path.startswith("/_blobs/") for r in fake.requests)
    assert_token_never_leaked(token, run, fake, tmp_path)


def test_a_baseline_of_another_question_set_schema_fails_the_check_with_how_to_rebaseline(
    fake, workspace, token, baseline_json, tmp_path
):
    other = json.loads(baseline_json)
    other["meta"]["question_set_schema"] = 0
    fake.add_baseline_artifact({"results.json": json.dumps(other)}, head_sha=MERGE_BASE_SHA)

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 2, run.log  # the PR cannot fix it: not a silent pass
    assert run.outputs["verdict"] == "incompatible"
    body = our_comments(fake)[0]["body"]
    assert "question-set schema: baseline v0, this run v1" in body
    assert "workflow_dispatch" in body and "rebaseline: true" in body
    assert "::error title=rag-ci%3A baseline not comparable::" in run.stdout
    assert_token_never_leaked(token, run, fake, tmp_path)


def test_fork_pr_with_read_only_token_keeps_the_report_and_saves_the_comment(
    fake, workspace, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    fake.read_only = True

    run = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(fork=True),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert run.returncode == 1, run.log  # the gate still holds; only the comment moved
    assert "Traceback" not in run.stderr
    assert fake.comments.get(7) is None
    assert [r.status for r in fake.requests if r.method == "POST"] == [403]
    saved = workspace / "rag-ci-output" / "comment.md"
    assert saved.read_text().startswith(COMMENT_MARKER)
    assert "## rag-ci" in run.summary
    assert "comment not posted" in run.stdout and "workflow_run" in run.stdout
    assert run.outputs["comment-url"] == ""
    assert_token_never_leaked(token, run, fake, tmp_path)
