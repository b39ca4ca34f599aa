"""End to end: a line pushed to the data branch cannot disarm the gate.

A history line marking a question known-flaky turns its real regression into "flaky, not
gating". Such a mark now counts only when the line was written by the action: the newest
commit adding it on the data branch is attributed to the action's account *and* GitHub
verified its signature (GitHub signs what a bot commits through the API; a pushed commit
claiming the bot's e-mail is not verified). The comment says when a regression was cleared
by the history, and when marks were ignored."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from action_harness import HEAD_SHA, MERGE_BASE_SHA, REPO, clean_env, pull_request_event, run_action

from fakes.fake_github import FakeGitHubServer

pytestmark = pytest.mark.slow
BOT = "github-actions[bot]"
FLAKY_LINE = json.dumps(
    {
        "schema": 1,
        "timestamp": "2025-01-01T00:00:00+00:00",
        "git_sha": "9" * 40,
        "git_ref": "refs/heads/main",
        "event": "push",
        "questions": 2,
        "pass_rate": 1.0,
        "flaky": {"Q-B": [1, 4]},
    },
    sort_keys=True,
)


def tiny_repository(root: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "fakes" / "tiny_rag.py", root / "tiny_rag.py")
    (root / "questions.yml").write_text(
        "version: 1\nquestions:\n"
        "  - {id: Q-A, question: What is the delay on a?, doc_id: a, sources: [a/x.md]}\n"
        "  - {id: Q-B, question: What is the delay on b?, doc_id: b, sources: [b/y.md]}\n"
    )
    (root / "rag-ci.yml").write_text(
        "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        "target: {kind: command, command: [python, tiny_rag.py], pass_env: ['TINY_RAG_*'], timeout_s: 10}\n"
        "metrics: {hit_at_k: {k: 5}}\n"
    )
    return root


@pytest.fixture
def baseline(tmp_path) -> bytes:
    main = tiny_repository(tmp_path / "main")
    subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", "run", "-o", "results.json", "--no-progress"],
        cwd=main,
        env=clean_env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    return (main / "results.json").read_bytes()


def pr_with_history(tmp_path, token, baseline, *, login: str | None, verified: bool):
    """Q-B regresses on the PR (TINY_RAG_BROKEN); the data branch holds one line marking it flaky."""
    workspace = tiny_repository(tmp_path / "workspace")
    with FakeGitHubServer(token=token) as fake:
        fake.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        fake.add_baseline_artifact({"results.json": baseline}, head_sha=MERGE_BASE_SHA)
        fake.push_commit("rag-ci-data", "README.md", "# rag-ci data\n", login=BOT, verified=True)
        fake.push_commit(
            "rag-ci-data", "eval_history.jsonl", FLAKY_LINE + "\n", login=login, verified=verified
        )
        run = run_action(
            fake,
            workspace,
            event_name="pull_request",
            event=pull_request_event(),
            token=token,
            env={"TINY_RAG_BROKEN": "1"},
        )
        [comment] = fake.comments[7]
        return run, comment["body"], fake.routes()


@pytest.mark.parametrize(
    "login, verified",
    [("mallory", False), (BOT, False), ("mallory", True)],
    ids=["pushed by a collaborator", "claiming the bot's e-mail, unsigned", "signed, by another account"],
)
def test_a_known_flaky_mark_not_written_by_the_action_does_not_clear_a_regression(
    tmp_path, token, baseline, login, verified
):
    run, comment, routes = pr_with_history(tmp_path, token, baseline, login=login, verified=verified)

    assert run.returncode == 1, run.log  # Q-B's regression gates
    assert run.outputs["regressions"] == "1"
    assert "1 line(s) of the history mark questions as known-flaky but were not written by rag-ci" in comment
    assert "cleared by the history" not in comment
    assert "GET /repos/acme/rag/commits" in routes and "GET /repos/acme/rag/commits/{sha}" in routes


def test_a_known_flaky_mark_the_action_wrote_clears_the_regression_and_the_comment_says_so(
    tmp_path, token, baseline
):
    run, comment, _ = pr_with_history(tmp_path, token, baseline, login=BOT, verified=True)

    assert run.returncode == 0, run.log
    assert run.outputs["regressions"] == "0"
    assert "cleared by the history of main: known flaky (pass rate on main 25%)" in comment
    assert "were ignored" not in comment


def test_corrupt_nan_huge_and_deeply_nested_history_lines_are_skipped_with_a_warning(
    tmp_path, token, baseline
):
    """A bad history line must never stop a pull request's run."""
    lines = [
        '{"pass_rate": NaN}',
        '{"pass_rate": 1e999}',
        '{"pass_rate": 0.5, "trunc',
        "[" * 50_000 + "]" * 50_000,
        FLAKY_LINE,
    ]
    workspace = tiny_repository(tmp_path / "workspace")
    with FakeGitHubServer(token=token) as fake:
        fake.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        fake.add_baseline_artifact({"results.json": baseline}, head_sha=MERGE_BASE_SHA)
        fake.push_commit(
            "rag-ci-data", "eval_history.jsonl", "\n".join(lines) + "\n", login=BOT, verified=True
        )
        run = run_action(fake, workspace, event_name="pull_request", event=pull_request_event(), token=token)

    assert run.returncode == 0, run.log
    assert (
        "::warning title=rag-ci%3A history::eval_history.jsonl on rag-ci-data: skipped 4 unreadable line(s)"
        in run.log
    )
    assert "line 4: nested too deeply" in run.log and "Traceback" not in run.log
