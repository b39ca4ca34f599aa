"""The nearest trusted ancestor: what a pull request is compared with, and what can never become
its baseline (a copy for a release branch, a copy or an artifact another workflow wrote, an
artifact of a tag called `main`), each refused where the reader looks, never a pass.

The runs are canned (no RAG is started); GitHub is FakeGitHubServer, whose commit graph answers
the history and compare calls. The helpers are those of test_action_baseline_trust.
"""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

from integration.test_action_baseline_sources import MAIN_SHA, PR_HEAD, baseline_push, copies, pr
from integration.test_action_baseline_trust import (
    DATA,
    OLD_SHA,
    SIDE_RUN,
    everything_failed,
    fake,  # noqa: F401 (a fixture)
    merge_base_without_artifact,
    plant,
    project,  # noqa: F401 (a fixture)
    release_pr,
)

from fakes.fake_github import FakeRun, zip_of
from rag_ci.action.entry import EXIT_ERROR, EXIT_REGRESSION

LINT = ".github/workflows/lint.yml"  # a workflow with `contents: write` that is not rag-ci's
RELEASE_SHA = "d" * 40  # release/1.x, cut from main's tip (release_pr lays it out)


def now() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}"


def body(fake) -> str:
    return fake.comments[7][0]["body"]


def test_a_copy_naming_a_genuine_release_branch_run_is_never_that_branchs_baseline(fake, project):
    baseline_push(fake, project)  # main's baseline at MAIN_SHA: artifact and copy
    fake.advance(91)  # the artifact expired: main's copy is left
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "release/1.x", RELEASE_SHA, event="push")  # a genuine release run
    plant(fake, f"{now()}-{RELEASE_SHA}-{SIDE_RUN}.json.gz", RELEASE_SHA)  # rag-ci writes no release copy

    code, out, _ = release_pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out  # compared with main's copy at the branch point
    assert f"`{MAIN_SHA[:7]}" in body(
        fake
    ) and "(main, data branch, 1 commit before the merge base, " in body(fake)
    assert f"run {SIDE_RUN} ran on release/1.x, not main" in out


def test_a_copy_written_by_a_successful_push_run_of_another_workflow_is_refused(fake, project):
    merge_base_without_artifact(fake, project)  # main's artifact at OLD_SHA, none at the merge base
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "main", MAIN_SHA, event="push", path=LINT)
    plant(fake, f"{now()}-{MAIN_SHA}-{SIDE_RUN}.json.gz", MAIN_SHA)

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert f"ran `{LINT}`, not a baseline workflow" in out
    compared = body(fake)
    assert f"`{OLD_SHA[:7]}" in compared and "(main, artifact, 1 commit before the merge base, " in compared
    # the refusal is news for the reader: in the comment and the check run, not the log only
    [check] = fake.check_runs.values()
    for text in (compared, check["output"]["summary"]):
        assert "**Refused as the baseline** (1;" in text and "not a baseline workflow" in text, text[-800:]


def test_an_artifact_another_workflow_uploaded_at_the_merge_base_is_refused(fake, project):
    merge_base_without_artifact(fake, project)
    lint = fake.add_baseline_artifact({"results.json": everything_failed(MAIN_SHA)}, head_sha=MAIN_SHA)
    lint.zip_bytes = zip_of({"results.json": gzip.decompress(everything_failed(MAIN_SHA))})
    fake.runs[lint.run_id].path = LINT

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert f"ran `{LINT}`, not a baseline workflow" in out
    assert f"`{OLD_SHA[:7]}" in body(fake)


def test_an_artifact_of_a_tag_called_main_is_not_on_main_and_never_the_baseline(fake, project):
    baseline_push(fake, project)  # main's genuine baseline at MAIN_SHA
    fake.merge_bases[PR_HEAD] = "e" * 40  # the PR branched from a later commit of main without a baseline
    fake.graph.commit("e" * 40, MAIN_SHA, branch="main")
    # A writer's own commit, pushed as the tag `main`: its run reports `head_branch: main`.
    fake.graph.commit("9" * 40, MAIN_SHA)
    tag = fake.add_baseline_artifact({"results.json": "{}"}, head_sha="9" * 40)
    tag.zip_bytes = zip_of({"results.json": gzip.decompress(everything_failed("9" * 40))})

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out  # against main's genuine baseline, one commit behind the merge base
    assert f"`{MAIN_SHA[:7]}" in body(fake) and "(main, artifact, 1 commit before the merge base, " in body(
        fake
    )

    # main's genuine baselines gone: the tag's artifact is still no baseline, and the check says why
    for artifact in [a for a in fake.artifacts if a.head_sha == MAIN_SHA]:
        fake.delete_artifact(artifact)
    for path in copies(fake):
        fake.push_removal(DATA, path, login="github-actions[bot]", verified=True)

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    assert f"artifact #{tag.id} of main (commit {'9' * 12}) is not on the history of {'e' * 12}" in summary


def test_a_refused_copy_is_named_as_refused_in_the_check_run_and_the_comment_not_as_gone(fake, project):
    baseline_push(fake, project, sha=OLD_SHA)
    for artifact in list(fake.artifacts):
        fake.delete_artifact(artifact)
    for path in copies(fake):
        fake.push_removal(DATA, path, login="github-actions[bot]", verified=True)
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "main", MAIN_SHA, event="pull_request")
    plant(fake, f"{now()}-{MAIN_SHA}-{SIDE_RUN}.json.gz", MAIN_SHA)  # written by a pull_request run

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    refusal = f"run {SIDE_RUN} was a `pull_request` run, not a push, dispatch or schedule"
    assert "The baseline of main was refused" in summary and refusal in summary
    [check] = fake.check_runs.values()
    assert (
        check["output"]["title"] == "rag-ci: The baseline of main was refused"
        and refusal in check["output"]["summary"]
    )
    assert refusal in body(fake) and "is gone" not in body(fake)


def test_a_pull_request_with_its_baseline_at_the_merge_base_makes_no_more_calls_than_before(fake, project):
    baseline_push(fake, project)
    before = len(fake.requests)

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    routes = [r.route for r in fake.requests[before:]]
    assert (
        "GET /repos/acme/rag/commits" not in routes
    )  # the history is read only when the merge base has none
    assert routes.count("GET /repos/acme/rag/actions/runs/{n}") == 1


def test_deleting_the_artifacts_and_the_data_branch_leaves_the_baseline_run_as_the_trace(fake, project):
    baseline_push(fake, project)
    for artifact in list(fake.artifacts):
        fake.delete_artifact(artifact)
    fake.delete_branch(DATA)

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out  # never "no baseline yet"
    assert "The baseline of main is gone" in summary
    assert (
        "of `.github/workflows/rag-ci-baseline.yml` (push on main, commit aaaaaaaaaaaa) succeeded" in summary
    )


def test_a_repository_whose_baseline_workflow_never_succeeded_is_a_bootstrap(fake, project):
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "main", MAIN_SHA, event="push", conclusion="failure")

    code, out, summary = pr(fake, project, regressed=True)

    assert code == 0, out
    assert "bootstrap on `main`" in summary
