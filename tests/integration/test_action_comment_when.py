"""The action's `comment` input (always | on-change | on-failure | never), against FakeGitHubServer:
a new comment only when the choice says so, an existing one always brought up to date (a stale
red never stays), and the check run and the job summary written whatever the choice. The
`junit` input's report beside results.json.

The runs are canned (no RAG is started), as in test_github_action_modes.py."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from junit_schema import Schema

from builders import metric, question, run
from fakes.fake_github import FakeGitHubServer
from rag_ci.action.entry import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION, action
from rag_ci.action.settings import Secret, Settings
from rag_ci.errors import RagCiError
from rag_ci.files.results_file import save_results
from rag_ci.github.client import connect
from rag_ci.github.comments import COMMENT_MARKER
from rag_ci.github.workflow import Runner

PASSING = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]), question("Q2", metrics=[metric("hit_at_k", 1.0)])
)
REGRESSED = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]),
    question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)]),
)
GAINED = run(  # against REGRESSED: Q2 passes again, nothing fails
    question("Q1", metrics=[metric("hit_at_k", 1.0)]), question("Q2", metrics=[metric("hit_at_k", 1.0)])
)
PR_EVENT = {
    "pull_request": {
        "number": 7,
        "head": {"sha": "h" * 40, "repo": {"full_name": "acme/rag"}},
        "base": {"ref": "main"},
    },
    "repository": {"default_branch": "main"},
}


@pytest.fixture
def fake():
    with FakeGitHubServer(token="t0ken") as server:
        yield server


@pytest.fixture
def project(tiny_project, tmp_path) -> Path:
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}")
    return tmp_path


def pr_push(fake: FakeGitHubServer, project: Path, head, comment: str, **inputs) -> int:
    """One pull_request run of the action with `head` as this push's result, against main's PASSING."""
    settings = Settings(
        event_name="pull_request",
        event=PR_EVENT,
        repository="acme/rag",
        ref="refs/pull/7/merge",
        sha="f" * 40,
        run_id="1",
        workspace=project,
        step_summary=project / "summary.md",
        github_output=project / "output.txt",
        github_token=Secret("t0ken"),
        comment=comment,
        **inputs,
    )
    (project / "summary.md").write_text("")
    github = connect(fake.url, Secret("t0ken"), "acme/rag", seconds_between_requests=0)
    runner = Runner(
        step_summary=settings.step_summary,
        github_output=settings.github_output,
        in_actions=True,
        stream=io.StringIO(),
    )

    def evaluate(project, output, cache_baseline, full, context, confirm_each):
        save_results(output, head)
        return head

    return action(settings, github, runner, evaluate=evaluate)


def ours(fake: FakeGitHubServer) -> list[dict]:
    return [c for c in fake.comments.get(7, []) if c["body"].startswith(COMMENT_MARKER)]


def test_on_failure_posts_nothing_on_a_clean_pr_then_on_a_regression_then_edits_it_green(fake, project):
    fake.add_baseline_artifact({"results.json": PASSING.model_dump_json()})

    assert pr_push(fake, project, PASSING, "on-failure") == EXIT_PASS
    assert ours(fake) == []
    [check] = fake.check_runs.values()  # the check run and the summary are written all the same
    assert check["conclusion"] == "success" and "## rag-ci" in (project / "summary.md").read_text()

    assert pr_push(fake, project, REGRESSED, "on-failure") == EXIT_REGRESSION
    [red] = ours(fake)
    assert "## rag-ci: ❌ 1 regression" in red["body"]

    assert pr_push(fake, project, PASSING, "on-failure") == EXIT_PASS  # fixed: the red comment goes green
    [green] = ours(fake)
    assert green["id"] == red["id"] and "## rag-ci: ✅" in green["body"] and "❌" not in green["body"]
    assert sum(1 for r in fake.requests if r.route == "POST /repos/acme/rag/issues/{n}/comments") == 1


def test_on_change_skips_a_run_that_changed_nothing_and_posts_a_gain(fake, project):
    fake.add_baseline_artifact({"results.json": REGRESSED.model_dump_json()})
    # Q2 failed on main and fails now: nothing regressed, gained or changed.
    assert pr_push(fake, project, REGRESSED, "on-change") == EXIT_PASS
    assert ours(fake) == []
    assert pr_push(fake, project, GAINED, "on-change") == EXIT_PASS  # a gain is a change
    [comment] = ours(fake)
    assert "Gains (1)" in comment["body"]


def test_never_posts_no_comment_but_updates_one_left_from_before(fake, project):
    fake.add_baseline_artifact({"results.json": PASSING.model_dump_json()})
    assert pr_push(fake, project, REGRESSED, "never") == EXIT_REGRESSION
    assert ours(fake) == [] and len(fake.check_runs) == 1  # the check run fails the PR on its own

    assert pr_push(fake, project, REGRESSED, "always") == EXIT_REGRESSION  # the workflow had `always` once
    [red] = ours(fake)
    assert pr_push(fake, project, PASSING, "never") == EXIT_PASS
    [now] = ours(fake)
    assert now["id"] == red["id"] and "## rag-ci: ✅" in now["body"]  # not left red


def test_an_unknown_choice_is_a_clear_input_error():
    with pytest.raises(
        RagCiError,
        match=r"input comment: expected one of always, on-change, on-failure, never, got 'sometimes'",
    ):
        Settings.from_environ({"RAG_CI_COMMENT": "sometimes"})
    assert Settings.from_environ({"RAG_CI_COMMENT": " On-Failure "}).comment == "on-failure"
    assert Settings.from_environ({}).comment == "always" and Settings.from_environ({}).junit is False
    assert Settings.from_environ({"RAG_CI_JUNIT": "true"}).junit is True


def test_the_junit_input_writes_junit_xml_beside_results_json(fake, project):
    fake.add_baseline_artifact({"results.json": PASSING.model_dump_json()})
    assert pr_push(fake, project, REGRESSED, "always") == EXIT_REGRESSION
    assert not (project / "rag-ci-output" / "junit.xml").exists()  # only when asked

    assert pr_push(fake, project, REGRESSED, "always", junit=True) == EXIT_REGRESSION
    xml = (project / "rag-ci-output" / "junit.xml").read_text(encoding="utf-8")
    assert Schema.read().problems(xml) == []
    assert '<failure type="regression"' in xml and xml.count("<failure") == 1


def test_a_run_that_cannot_evaluate_counts_as_failed_and_never_leaves_a_stale_verdict(fake, project):
    fake.add_baseline_artifact({"results.json": PASSING.model_dump_json()})
    assert pr_push(fake, project, PASSING, "always") == EXIT_PASS  # a green comment from an earlier push
    [green] = ours(fake)
    (project / "rag-ci.yml").write_text("target: {kind: nonsense}\n")  # this push breaks the config

    assert pr_push(fake, project, PASSING, "never") == EXIT_ERROR
    [now] = ours(fake)
    assert now["id"] == green["id"] and "not evaluated" in now["body"]  # not left green

    fake.comments.clear()
    assert pr_push(fake, project, PASSING, "on-failure") == EXIT_ERROR  # an error is a failure: said
    [posted] = ours(fake)
    assert "not evaluated" in posted["body"]
