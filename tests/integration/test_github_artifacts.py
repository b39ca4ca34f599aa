"""Finding and downloading the baseline artifact, against FakeGitHubServer."""

from __future__ import annotations

import pytest

from fakes.fake_github import zip_of
from rag_ci.action.settings import BASELINE_WORKFLOWS
from rag_ci.github.artifacts import usable
from rag_ci.github.client import GitHubError

NAME = "rag-ci-baseline"


def newest(github, branches=("main",)):
    return usable(github.baseline_artifacts(NAME), branches)[0]


def test_the_usable_artifacts_are_those_of_the_branches_asked_for_newest_first(fake, github):
    old = fake.add_baseline_artifact({"results.json": "old"}, created_at="2025-01-01T00:00:00Z")
    new = fake.add_baseline_artifact({"results.json": "new"}, created_at="2025-01-03T00:00:00Z")
    fake.add_baseline_artifact({"results.json": "other"}, branch="develop", created_at="2025-01-04T00:00:00Z")
    fake.add_baseline_artifact({"results.json": "fork"}, from_fork=True, created_at="2025-01-05T00:00:00Z")

    found = usable(github.baseline_artifacts(NAME), ["main"])

    assert [a.id for a in found] == [new.id, old.id]
    assert fake.routes() == ["GET /repos/acme/rag/actions/artifacts"]
    assert fake.requests[0].query == {"name": NAME, "per_page": "100"}


@pytest.mark.parametrize(
    ("untrusted", "why"),
    [
        (
            {"event": "pull_request"},
            "was a `pull_request` run",
        ),  # uploaded by a PR run, whatever its branch says
        ({"conclusion": "failure"}, "did not succeed (failure)"),
        ({"conclusion": None}, "did not succeed (unfinished)"),  # still running
    ],
)
def test_a_run_that_is_not_a_successful_push_dispatch_or_schedule_vouches_for_nothing(
    fake, github, untrusted, why
):
    artifact = fake.add_baseline_artifact({"results.json": "bad"}, **untrusted)

    facts = github.workflow_run(artifact.run_id)

    assert why in facts.problem("acme/rag", workflows=BASELINE_WORKFLOWS)


def test_a_run_of_another_workflow_vouches_for_nothing_and_the_baseline_workflows_run_does(fake, github):
    lint = fake.add_baseline_artifact({"results.json": "planted"})
    fake.runs[lint.run_id].path = ".github/workflows/lint.yml"
    genuine = fake.add_baseline_artifact({"results.json": "ok"})

    problem = github.workflow_run(lint.run_id).problem("acme/rag", workflows=BASELINE_WORKFLOWS)

    assert "ran `.github/workflows/lint.yml`, not a baseline workflow" in problem
    assert github.workflow_run(genuine.run_id).problem("acme/rag", workflows=BASELINE_WORKFLOWS) is None


def test_the_distance_of_each_commit_behind_a_tip_is_counted_on_its_history_in_one_call(fake, github):
    fake.graph.line("1" * 40, "2" * 40, "3" * 40, "4" * 40, branch="main")
    fake.graph.commit("9" * 40, "2" * 40)  # a side commit (a tag's, say): not on main

    distance = github.ancestor_distances("4" * 40, {"2" * 40, "4" * 40, "9" * 40})

    assert distance == {"4" * 40: 0, "2" * 40: 2}
    assert fake.routes() == ["GET /repos/acme/rag/commits"]
    assert github.ancestor_distances("main", {"1" * 40}) == {"1" * 40: 3}


def test_a_history_that_cannot_be_listed_is_an_error_never_not_an_ancestor(fake, github):
    with pytest.raises(GitHubError, match="list the commits behind"):
        github.ancestor_distances("5" * 40, {"1" * 40})  # a commit GitHub does not know: 404


def test_download_follows_the_redirect_without_sending_the_token_to_blob_storage(fake, github, tmp_path):
    fake.add_baseline_artifact(
        {"rag-ci-output/results.json": '{"deep": 1}', "results.json": '{"top": 1}', "report.html": "<html>"}
    )
    artifact = newest(github)

    path = github.download_file(artifact, "results.json", tmp_path / "baseline.json")

    assert path.read_text() == '{"top": 1}'  # the one nearest the root
    api, blob = [r for r in fake.requests if "zip" in r.path or "_blobs" in r.path]
    assert (api.host, api.authorized) == ("127.0.0.1", True)
    assert (blob.host, blob.had_authorization) == ("localhost", False)


def test_a_zip_without_results_json_gives_none(fake, github, tmp_path):
    fake.add_baseline_artifact({"notes.txt": "nothing here"})
    artifact = newest(github)
    assert github.download_file(artifact, "results.json", tmp_path / "r.json") is None


def test_an_expired_or_unreadable_artifact_is_a_clear_error(fake, github, tmp_path):
    fake.add_baseline_artifact({"results.json": "x"})
    artifact = newest(github)
    fake.artifacts[0].zip_bytes = b"not a zip"
    with pytest.raises(GitHubError, match="download artifact"):
        github.download_file(artifact, "results.json", tmp_path / "r.json")
    fake.artifacts[0].expired = True
    with pytest.raises(GitHubError, match="410"):
        github.download_file(artifact, "results.json", tmp_path / "r.json")


def test_listing_without_actions_read_permission_says_what_to_grant(fake, github):
    fake.inject("GET", "/repos/acme/rag/actions/artifacts", 403, "Resource not accessible by integration")
    with pytest.raises(GitHubError, match="permissions: actions: read"):
        github.baseline_artifacts(NAME)


def test_zip_of_helper_round_trips():
    import io
    import zipfile

    assert zipfile.ZipFile(io.BytesIO(zip_of({"a/b.txt": "x"}))).read("a/b.txt") == b"x"
