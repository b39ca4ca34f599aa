"""Finding and downloading the baseline artifact, against FakeGitHubServer."""

from __future__ import annotations

import pytest

from fakes.fake_github import zip_of
from rag_ci.github.client import GitHubError

NAME = "rag-ci-baseline"


def no_preference():
    return None


def test_the_newest_artifact_of_a_successful_main_run_is_the_baseline(fake, github):
    fake.add_baseline_artifact({"results.json": "old"}, created_at="2025-01-01T00:00:00Z")
    newest = fake.add_baseline_artifact({"results.json": "new"}, created_at="2025-01-03T00:00:00Z")
    fake.add_baseline_artifact(
        {"results.json": "other branch"}, branch="develop", created_at="2025-01-04T00:00:00Z"
    )

    found = github.find_baseline(NAME, "main", no_preference)

    assert found.id == newest.id


def test_the_artifact_at_the_merge_base_is_preferred_over_a_newer_one(fake, github):
    at_base = fake.add_baseline_artifact(
        {"results.json": "x"}, head_sha="b" * 40, created_at="2025-01-01T00:00:00Z"
    )
    fake.add_baseline_artifact({"results.json": "y"}, head_sha="c" * 40, created_at="2025-01-02T00:00:00Z")
    asked = []

    found = github.find_baseline(NAME, "main", lambda: asked.append(1) or "b" * 40)

    assert found.id == at_base.id and asked == [1]


@pytest.mark.parametrize(
    "untrusted",
    [
        {"from_fork": True},  # a fork's run on its own branch called main
        {"event": "pull_request"},  # uploaded by a PR run, whatever its branch says
        {"conclusion": "failure"},
        {"conclusion": None},  # still running
    ],
)
def test_artifacts_from_untrusted_or_unsuccessful_runs_are_skipped(fake, github, untrusted):
    trusted = fake.add_baseline_artifact({"results.json": "ok"}, created_at="2025-01-01T00:00:00Z")
    fake.add_baseline_artifact({"results.json": "bad"}, created_at="2025-01-05T00:00:00Z", **untrusted)

    assert github.find_baseline(NAME, "main", no_preference).id == trusted.id


def test_no_candidate_means_bootstrap_without_asking_for_the_merge_base(fake, github):
    assert github.find_baseline(NAME, "main", lambda: pytest.fail("merge-base not needed")) is None
    assert fake.routes() == ["GET /repos/acme/rag/actions/artifacts"]
    assert fake.requests[0].query == {"name": NAME, "per_page": "100"}


def test_download_follows_the_redirect_without_sending_the_token_to_blob_storage(fake, github, tmp_path):
    fake.add_baseline_artifact(
        {"rag-ci-output/results.json": '{"deep": 1}', "results.json": '{"top": 1}', "report.html": "<html>"}
    )
    artifact = github.find_baseline(NAME, "main", no_preference)

    path = github.download_file(artifact, "results.json", tmp_path / "baseline.json")

    assert path.read_text() == '{"top": 1}'  # the one nearest the root
    api, blob = [r for r in fake.requests if "zip" in r.path or "_blobs" in r.path]
    assert (api.host, api.authorized) == ("127.0.0.1", True)
    assert (blob.host, blob.had_authorization) == ("localhost", False)


def test_a_zip_without_results_json_gives_none(fake, github, tmp_path):
    fake.add_baseline_artifact({"notes.txt": "nothing here"})
    artifact = github.find_baseline(NAME, "main", no_preference)
    assert github.download_file(artifact, "results.json", tmp_path / "r.json") is None


def test_an_expired_or_unreadable_artifact_is_a_clear_error(fake, github, tmp_path):
    fake.add_baseline_artifact({"results.json": "x"})
    artifact = github.find_baseline(NAME, "main", no_preference)
    fake.artifacts[0].zip_bytes = b"not a zip"
    with pytest.raises(GitHubError, match="download artifact"):
        github.download_file(artifact, "results.json", tmp_path / "r.json")
    fake.artifacts[0].expired = True
    with pytest.raises(GitHubError, match="410"):
        github.download_file(artifact, "results.json", tmp_path / "r.json")


def test_listing_without_actions_read_permission_says_what_to_grant(fake, github):
    fake.inject("GET", "/repos/acme/rag/actions/artifacts", 403, "Resource not accessible by integration")
    with pytest.raises(GitHubError, match="permissions: actions: read"):
        github.find_baseline(NAME, "main", no_preference)


def test_zip_of_helper_round_trips():
    import io
    import zipfile

    assert zipfile.ZipFile(io.BytesIO(zip_of({"a/b.txt": "x"}))).read("a/b.txt") == b"x"
