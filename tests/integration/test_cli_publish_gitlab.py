"""`rag-ci publish gitlab` as a command: GitLab CI's variables as defaults, a clear exit 2 for
what is missing, the `--comment` choice, against FakeGitLabServer."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from builders import metric, question, run
from fakes.fake_gitlab import FakeGitLabServer
from rag_ci.cli import cli
from rag_ci.files.results_file import save_results
from rag_ci.gitlab.notes import NOTE_MARKER

TOKEN = "glpat-Pm3Kd7Jx1Lq9Hv5N"
PASSING = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]), question("Q2", metrics=[metric("hit_at_k", 1.0)])
)
REGRESSED = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]),
    question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)]),
)


@pytest.fixture
def gitlab():
    with FakeGitLabServer() as server:
        server.add_user(TOKEN, "project_42_bot")
        yield server


def publish(gitlab, tmp_path, head, *args, **env):
    save_results(tmp_path / "base.json", PASSING)
    save_results(tmp_path / "head.json", head)
    variables = {
        "CI_API_V4_URL": gitlab.url,
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "5",
        "RAG_CI_GITLAB_TOKEN": TOKEN,
        **env,
    }
    return CliRunner().invoke(
        cli,
        ["publish", "gitlab", str(tmp_path / "head.json"), "--baseline", str(tmp_path / "base.json"), *args],
        env=variables,
        catch_exceptions=False,
    )


def test_on_failure_notes_a_regression_and_skips_a_clean_run(gitlab, tmp_path):
    clean = publish(gitlab, tmp_path, PASSING, "--comment", "on-failure")
    assert clean.exit_code == 0 and "no note on !5" in clean.output and gitlab.notes.get(5, []) == []
    red = publish(gitlab, tmp_path, REGRESSED, "--comment", "on-failure")
    assert red.exit_code == 0, red.output  # publishing is not gating: the run's exit code is
    [note] = gitlab.notes[5]
    assert note["body"].startswith(f"{NOTE_MARKER}\n## rag-ci: ❌ 1 regression") and "Q2" in note["body"]
    assert TOKEN not in red.output


def test_outside_a_merge_request_pipeline_it_says_what_is_missing(gitlab, tmp_path):
    done = publish(gitlab, tmp_path, PASSING, CI_MERGE_REQUEST_IID="")
    assert done.exit_code == 2
    assert "no --merge-request (or CI_MERGE_REQUEST_IID)" in done.output and gitlab.requests == []


def test_without_the_token_variable_it_says_which_variable_and_what_token(gitlab, tmp_path):
    done = publish(gitlab, tmp_path, PASSING, "--token-variable", "MY_GITLAB_TOKEN")
    assert done.exit_code == 2
    assert "the variable MY_GITLAB_TOKEN is not set" in done.output and "scope `api`" in done.output
    assert gitlab.requests == []


def test_a_refused_token_exits_2_without_showing_it(gitlab, tmp_path):
    done = publish(gitlab, tmp_path, PASSING, RAG_CI_GITLAB_TOKEN="glpat-Not5The7Right9One")
    assert done.exit_code == 2 and "HTTP 401" in done.output and "glpat-Not5The7Right9One" not in done.output
