"""End to end: the action on the default branch (push, workflow_dispatch) and workflow_run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from action_harness import (
    REPOSITORY,
    assert_token_never_leaked,
    copy_example_repository,
    push_event,
    run_action,
)

from fakes.fake_github import FakeGitHubServer
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow


@pytest.fixture
def fake(token: str):
    with FakeGitHubServer(token=token) as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_example_repository(tmp_path / "workspace")


def history_lines(fake: FakeGitHubServer) -> list[dict]:
    data = fake.file_on_branch("rag-ci-data", "eval_history.jsonl") or b""
    return [json.loads(line) for line in data.decode().splitlines()]


def test_push_to_main_writes_results_and_appends_one_history_line_per_run(
    fake, workspace, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha="4" * 40)

    first = run_action(fake, workspace, event_name="push", event=push_event(), token=token)
    second = run_action(
        fake, workspace, event_name="push", event=push_event(before="5" * 40, after="6" * 40), token=token
    )

    for run in (first, second):
        assert run.returncode == 0, run.log
        assert run.outputs["verdict"] == "baseline"
        assert run.outputs["results-path"] == "rag-ci-output/results.json"
    results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
    assert results["meta"]["git_sha"] == "6" * 40  # ready for the workflow's upload step
    lines = history_lines(fake)
    assert [line["git_sha"] for line in lines] == ["5" * 40, "6" * 40]
    assert lines[0]["pass_rate"] == 1.0 and lines[0]["questions"] == results["aggregates"]["overall"]["n"]
    assert lines[0]["run_url"] == f"https://github.example/{REPOSITORY}/actions/runs/4242"
    assert "README.md" in fake.branches["rag-ci-data"]  # created as an orphan data branch
    routes = fake.routes()
    assert not any("/comments" in r for r in routes)  # posts nothing
    assert "POST /repos/acme/rag/git/refs" in routes  # branch created once...
    history_puts = [r for r in fake.requests if r.method == "PUT" and r.path.endswith("/eval_history.jsonl")]
    assert len(history_puts) == 1  # ...then appended through the contents API
    # Each run also keeps its results on the data branch, for when the artifact has expired.
    # Each named for its commit and the workflow run that wrote it (GITHUB_RUN_ID).
    assert sorted(
        p.split("-", 1)[-1] for p in fake.branches["rag-ci-data"] if p.startswith("baselines/")
    ) == [f"{'5' * 40}-4242.json.gz", f"{'6' * 40}-4242.json.gz"]
    assert_token_never_leaked(token, second, fake, tmp_path)


def test_a_tag_push_does_nothing(fake, workspace, token, tmp_path):
    event = {**push_event(), "ref": "refs/tags/main"}  # a tag may carry any name, `main` too

    run = run_action(fake, workspace, event_name="push", event=event, token=token)

    assert run.returncode == 0, run.log
    assert "pushes to branches only; nothing to do on refs/tags/main" in run.stdout
    assert fake.requests == []


def test_a_push_to_a_release_branch_makes_its_baseline_with_mains_as_verdict_cache_and_no_history_line(
    fake, workspace, baseline_json, token
):
    fake.add_baseline_artifact(
        {"results.json": baseline_json}, head_sha="4" * 40
    )  # main's, at the branch point
    fake.graph.commit("d" * 40, "4" * 40, branch="release/1.x")
    event = {**push_event(before="4" * 40, after="d" * 40), "ref": "refs/heads/release/1.x"}

    run = run_action(fake, workspace, event_name="push", event=event, token=token)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "baseline" and run.outputs["results-path"]
    assert "[rag-ci] baseline: artifact #" in run.stdout  # main's baseline fed the verdict cache
    assert "rag-ci-data" not in fake.branches  # history and copies are the default branch's only


def test_dispatch_with_rebaseline_runs_full_without_reading_the_old_baseline(
    fake, workspace, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json})
    event = {
        "ref": "refs/heads/main",
        "inputs": {"rebaseline": "true"},
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }

    run = run_action(
        fake,
        workspace,
        event_name="workflow_dispatch",
        event=event,
        token=token,
        inputs={"rebaseline": "true"},
    )

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "rebaseline"
    assert json.loads((workspace / "rag-ci-output" / "results.json").read_text())["meta"]["full"] is True
    assert not any("artifacts" in r for r in fake.routes())
    assert len(history_lines(fake)) == 1
    assert "Re-baseline" in run.summary
    assert_token_never_leaked(token, run, fake, tmp_path)


def test_workflow_run_posts_the_saved_fork_comment_with_mentions_defused(fake, workspace, token, tmp_path):
    saved = f"{COMMENT_MARKER}\n## rag-ci: ❌ 1 regression\n\nping @everyone and @acme/team"
    artifact = fake.add_baseline_artifact(
        {"comment.md": saved}, name="rag-ci-comment", branch="feature", event="pull_request"
    )
    fake.add_pull(12, head_owner="contributor", head_branch="feature", head_sha="7" * 40)
    event = {
        "action": "completed",
        "workflow_run": {
            "id": artifact.run_id,
            "event": "pull_request",
            "head_branch": "feature",
            "head_sha": "7" * 40,
            "pull_requests": [],  # GitHub leaves this empty for pull requests from forks
            "head_repository": {"full_name": "contributor/rag", "owner": {"login": "contributor"}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }

    run = run_action(fake, workspace, event_name="workflow_run", event=event, token=token)

    assert run.returncode == 0, run.log
    [comment] = fake.comments[12]
    assert comment["body"].startswith(COMMENT_MARKER)
    assert "@everyone" not in comment["body"] and "@\u200beveryone" in comment["body"]
    # Never presented as the bot's own verdict: whose run produced it comes first, from the event.
    lines = comment["body"].splitlines()
    assert lines[1:3] == [
        "> [!IMPORTANT]",
        f"> **Produced by the fork's own run (workflow run {artifact.run_id} on "
        "contributor/rag@7777777), not by this repository's rag-ci.** The text below is that run's saved "
        "comment, posted as it was: untrusted, it may say anything. The pull request's check is the verdict; "
        "re-run rag-ci from this repository to confirm it.",
    ]
    assert "## rag-ci (as the fork's run reported it): ❌ 1 regression" in lines
    assert run.outputs["comment-url"] == comment["html_url"]
    assert_token_never_leaked(token, run, fake, tmp_path)


UNAVAILABLE_RAG = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request.get("id"), "error": "401 Unauthorized: OPENAI_API_KEY is not set"}), flush=True)
"""


def test_a_push_whose_questions_all_error_exits_2_and_is_neither_baseline_nor_history(
    fake, workspace, token, baseline_json, tmp_path
):
    # The RAG's own generator key is missing on main: every question errors.
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha="4" * 40)
    (workspace / "rag" / "unavailable.py").write_text(UNAVAILABLE_RAG)
    config = (workspace / "rag-ci.yml").read_text()
    (workspace / "rag-ci.yml").write_text(
        config.replace('command: ["python", "rag/server.py"]', 'command: ["python", "rag/unavailable.py"]')
    )

    run = run_action(fake, workspace, event_name="push", event=push_event(), token=token)

    assert run.returncode == 2, run.log  # the workflow's upload step does not run after a failed step
    assert run.outputs["verdict"] == "broken"
    assert "broken run: not a result" in run.summary and "401 Unauthorized" in run.summary
    assert history_lines(fake) == []
    written = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
    # The target's circuit breaker ends it at the first questions, naming the target and its error (docs/targets.md).
    assert written["meta"]["broken"].startswith(
        "target command `python rag/unavailable.py` stopped answering: the first 10 questions all failed"
    )
    assert "last error: target reported an error: 401 Unauthorized" in written["meta"]["broken"]
    assert_token_never_leaked(token, run, fake, tmp_path)
