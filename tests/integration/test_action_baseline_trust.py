"""A regression can never pass through the baseline: a planted copy, a failed lookup, a pull
request into another branch, a merge queue that requires the check, the sticky comment's owner.

The runs are canned (no RAG is started); GitHub is FakeGitHubServer. The helpers are those of
test_action_baseline_sources (a push to main stores its copy and uploads its artifact).
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import pytest
from integration.test_action_baseline_sources import (
    MAIN,
    MAIN_SHA,
    PR_HEAD,
    act,
    baseline_push,
    copies,
    pr,
    pr_event,
    results,
)

from fakes.fake_github import FakeGitHubServer, FakeRun
from rag_ci.action.entry import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION
from rag_ci.github.comments import COMMENT_MARKER

OLD_SHA, SIDE_RUN = "c" * 40, 4242


@pytest.fixture
def fake():
    with FakeGitHubServer(token="t0ken") as server:
        server.merge_bases[PR_HEAD] = MAIN_SHA
        server.graph.line("c" * 40, MAIN_SHA, branch="main")  # main: an older commit, then its tip
        yield server


@pytest.fixture
def project(tiny_project, tmp_path):
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}")
    return tmp_path


DATA = "rag-ci-data"
LOOKUP_FIX = 'Not treated as "no baseline yet"'


def everything_failed(sha: str) -> bytes:
    """A real-looking baseline in which every question failed: compared with it, no PR regresses."""
    lenient = json.loads(results(sha=sha).model_dump_json())
    for q in lenient["questions"]:
        q["verdict"] = "fail"
        for m in q["metrics"].values():
            m.update(passed=False, score=0.0)
    return gzip.compress(json.dumps(lenient).encode())


def plant(fake, name: str, sha: str, **how) -> str:
    """What a workflow with `contents: write` on any branch can do: a verified commit of the bot."""
    path = f"baselines/{name}"
    fake.push_commit(DATA, path, everything_failed(sha), login="github-actions[bot]", verified=True, **how)
    return path


def merge_base_without_artifact(fake, project):
    """main's artifact is at OLD_SHA; the PR's merge base, MAIN_SHA, has none (its baseline job failed)."""
    baseline_push(fake, project, sha=OLD_SHA)
    fake.merge_bases[PR_HEAD] = MAIN_SHA


# --- 1. a copy is trusted only from the run that wrote it, read from the Actions API ---------
def test_a_copy_planted_by_a_verified_bot_commit_at_the_merge_base_does_not_pass_a_regression(fake, project):
    merge_base_without_artifact(fake, project)
    plant(fake, f"20250101T000000Z-{MAIN_SHA}.json.gz", MAIN_SHA, date="2025-01-01T00:00:00Z")  # names no run

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out  # compared with main's newest artifact instead
    assert "records no workflow run" in out and f"`{OLD_SHA[:7]}" in fake.comments[7][0]["body"]


@pytest.mark.parametrize(
    "run",
    [
        # a collaborator's workflow on a pushed branch
        FakeRun(SIDE_RUN, "side-branch", MAIN_SHA, event="push"),
        FakeRun(SIDE_RUN, "main", MAIN_SHA, event="pull_request"),  # not an event a baseline comes from
        FakeRun(SIDE_RUN, "main", MAIN_SHA, event="push", conclusion="failure"),  # the run failed
        FakeRun(SIDE_RUN, "main", OLD_SHA, event="push"),  # a genuine main run, but of another commit
    ],
    ids=["side branch", "pull_request run", "failed run", "another commit"],
)
def test_a_copy_counts_only_when_its_run_is_a_successful_push_of_the_base_branch_at_its_commit(
    fake, project, run
):
    merge_base_without_artifact(fake, project)
    fake.runs[SIDE_RUN] = run
    now = datetime.now(UTC)
    plant(fake, f"{now:%Y%m%dT%H%M%SZ}-{MAIN_SHA}-{SIDE_RUN}.json.gz", MAIN_SHA)

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert "is not used as the baseline" in out or "is side-branch's baseline" in out
    assert f"GET /repos/acme/rag/actions/runs/{SIDE_RUN}" in [f"{r.method} {r.path}" for r in fake.requests]


def test_a_copy_written_by_the_successful_push_run_at_its_commit_gates(fake, project):
    baseline_push(fake, project)
    fake.advance(91)  # the artifact expired: the copy is all there is
    code, out, _ = pr(fake, project, regressed=True)
    assert code == EXIT_REGRESSION, out
    assert "/actions/runs/7000" in fake.comments[7][0]["body"]  # the comment links the run that made it


# --- 2. every lookup deciding "no baseline ever existed" fails closed ---------------------
def lose_everything_but(fake, *, history: bool, expired: bool):
    """main had a baseline: its artifact is gone (expired, or deleted), its copies deleted."""
    if expired:
        fake.advance(91)
    else:
        for artifact in list(fake.artifacts):
            fake.delete_artifact(artifact)
    for path in copies(fake):
        fake.branches[DATA].pop(path)
    if not history:
        fake.branches[DATA].pop("eval_history.jsonl")


def test_a_history_that_cannot_be_read_after_retries_is_exit_2_never_a_bootstrap(fake, project):
    baseline_push(fake, project)
    lose_everything_but(fake, history=True, expired=False)
    fake.inject("GET", "/repos/acme/rag/contents/eval_history.jsonl", 502, "Bad Gateway", times=2)
    before = len(fake.requests)

    code, out, summary = pr(fake, project, regressed=True, retries=1)

    assert code == EXIT_ERROR, out
    # GitHub failing on its side is told as such: re-run, nothing to configure
    assert (
        "reading `eval_history.jsonl` on `rag-ci-data` failed: GitHub answered 502 on every retry: re-run the job"
        in summary
    )
    assert LOOKUP_FIX in summary and "permissions" not in summary
    # retried once
    assert [r.status for r in fake.requests[before:] if r.path.endswith("eval_history.jsonl")] == [
        502,
        502,
    ]


def test_the_expired_artifact_is_found_in_the_first_listing_not_a_second_call_that_may_fail(fake, project):
    baseline_push(fake, project)
    lose_everything_but(fake, history=False, expired=True)
    # a second listing fails
    fake.inject("GET", "/repos/acme/rag/actions/artifacts", 500, "Server Error", times=1, skip=1)
    before = len(fake.requests)

    code, out, summary = pr(fake, project, regressed=True, retries=0)

    assert code == EXIT_ERROR, out
    assert "The baseline of main is gone" in summary and "has expired" in summary
    assert [r.route for r in fake.requests[before:]].count("GET /repos/acme/rag/actions/artifacts") == 1


def test_an_artifact_listing_that_fails_is_exit_2_naming_the_call(fake, project):
    baseline_push(fake, project)
    fake.inject("GET", "/repos/acme/rag/actions/artifacts", 500, "Server Error", times=1)
    code, out, summary = pr(fake, project, regressed=True, retries=0)
    assert code == EXIT_ERROR, out
    assert (
        "could not list the artifacts named 'rag-ci-baseline': GitHub answered 500 on every retry: re-run the job"
        in summary
    )
    assert "permissions" not in summary


@pytest.mark.parametrize(
    "line",
    ['{"git_sha": "aaa", "trunc', '{"git_ref": "refs/heads/main", "questions": 2}', "\x00\x01"],
    ids=["cut off", "no pass_rate", "stray bytes"],
)
def test_a_history_line_that_does_not_parse_still_shows_a_baseline_existed(fake, project, line):
    baseline_push(fake, project)
    lose_everything_but(fake, history=True, expired=False)
    fake.branches[DATA]["eval_history.jsonl"] = (line + "\n").encode()

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    assert "The baseline of main is gone" in summary and "has 1 line of main" in summary


def test_a_copy_listing_that_fails_is_exit_2_naming_the_call(fake, project):
    baseline_push(fake, project)
    fake.advance(91)
    fake.inject("GET", "/repos/acme/rag/contents/baselines", 502, "Bad Gateway", times=1)
    code, out, summary = pr(fake, project, regressed=False, retries=0)
    assert code == EXIT_ERROR, out
    assert "listing the baseline copies on `rag-ci-data` failed" in summary and LOOKUP_FIX in summary


# --- 4. a merge queue can require the check -----------------------------------------------
def test_a_merge_queue_run_that_cannot_evaluate_still_completes_the_check_on_the_queues_commit(fake, project):
    baseline_push(fake, project)
    lose_everything_but(fake, history=True, expired=True)
    queue = {
        "merge_group": {
            "head_sha": "9" * 40,
            "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-" + "9" * 40,
            "base_sha": MAIN_SHA,
            "base_ref": "refs/heads/main",
        },
        **MAIN,
    }

    code, out, _ = act(
        fake,
        project,
        "merge_group",
        queue,
        results(sha="9" * 40),
        sha="9" * 40,
        ref="refs/heads/gh-readonly-queue/main/pr-7-" + "9" * 40,
    )

    assert code == EXIT_ERROR, out
    [check] = fake.check_runs.values()
    assert (check["name"], check["head_sha"], check["conclusion"]) == ("rag-ci gate", "9" * 40, "failure")


# --- 5. a pull request's baseline is its base branch's ----------------------------------
def release_pr(fake, project, *, regressed: bool, **inputs):
    event = pr_event()
    event["pull_request"]["base"] = {"ref": "release/1.x", "sha": "d" * 40}
    fake.merge_bases[PR_HEAD] = "d" * 40
    fake.graph.commit("d" * 40, MAIN_SHA, branch="release/1.x")  # release/1.x was cut from main's tip
    return act(
        fake,
        project,
        "pull_request",
        event,
        results(regressed=regressed, sha="f" * 40, pr=7),
        ref="refs/pull/7/merge",
        **inputs,
    )


def test_a_pull_request_into_a_release_branch_without_its_own_baseline_is_compared_with_mains_at_the_branch_point(
    fake, project
):
    baseline_push(fake, project)  # main has an artifact, a copy and a history line
    fake.advance(91)  # main's artifact expired: only its copy is left

    code, out, summary = release_pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    body = fake.comments[7][0]["body"]
    assert f"`{MAIN_SHA[:7]}" in body and "(main, data branch, 1 commit before the merge base, " in body, body
    assert "bootstrap on" not in summary


def test_a_pull_request_into_a_release_branch_of_a_repository_without_any_baseline_is_a_bootstrap(
    fake, project
):
    code, out, summary = release_pr(fake, project, regressed=True)

    assert code == EXIT_PASS, out
    assert "bootstrap on `release/1.x`: no baseline on any ancestor" in summary
    assert "gh workflow run rag-ci-full.yml --ref release/1.x -f rebaseline=true" in summary


def test_a_pull_request_into_a_release_branch_gates_against_that_branchs_artifact(fake, project):
    baseline_push(fake, project)
    release = results(sha="d" * 40).model_dump_json()
    fake.upload_artifact(
        {"results.json": release},
        run_id=8100,
        head_sha="d" * 40,
        branch="release/1.x",
        event="workflow_dispatch",
    )

    code, out, _ = release_pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert (
        "`ddddddd" in fake.comments[7][0]["body"]
        and "(release/1.x, artifact, " in fake.comments[7][0]["body"]
    )


def test_a_release_branch_whose_artifact_expired_with_mains_copy_gone_is_lost_not_bootstrapped(fake, project):
    baseline_push(fake, project)
    fake.upload_artifact(
        {"results.json": results(sha="d" * 40).model_dump_json()},
        run_id=8100,
        head_sha="d" * 40,
        branch="release/1.x",
        event="workflow_dispatch",
    )
    fake.advance(91)
    for path in copies(fake):  # and main's copy is gone too: nothing trusted on the history is left
        fake.push_removal(DATA, path, login="github-actions[bot]", verified=True)

    code, out, summary = release_pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    assert "The baseline of release/1.x is gone" in summary and "(#" in summary and "has expired" in summary


# --- 6. the sticky comment: marker position, stale comments, identity ---------------------
def test_a_bots_comment_quoting_the_marker_is_never_overwritten(fake, project):
    baseline_push(fake, project)
    quoted = f"Bumps deps. Release notes quote: {COMMENT_MARKER} ✅ pass"
    fake.add_comment(7, quoted, login="dependabot[bot]")

    pr(fake, project, regressed=True)

    assert fake.comments[7][0]["body"] == quoted
    assert [c["user"]["login"] for c in fake.comments[7]] == ["dependabot[bot]", "github-actions[bot]"]


def test_a_second_marked_comment_of_ours_is_marked_stale_so_no_old_pass_stays(fake, project):
    baseline_push(fake, project)
    for _ in range(2):
        fake.add_comment(7, f"{COMMENT_MARKER}\n## rag-ci: ✅ pass", login="github-actions[bot]")

    pr(fake, project, regressed=True)

    current, stale = fake.comments[7]
    assert "regression" in current["body"] and stale["body"].startswith("<!-- rag-ci:stale -->")
    assert "✅" not in stale["body"] and current["html_url"] in stale["body"]


def test_a_failed_identity_lookup_never_leaves_a_green_comment_on_a_red_run(fake, project):
    baseline_push(fake, project)
    fake.use_personal_token("release-manager")
    assert pr(fake, project, regressed=False)[0] == EXIT_PASS
    fake.inject("GET", "/user", 502, "Bad Gateway", times=1)

    code, out, _ = pr(fake, project, regressed=True, retries=0)

    assert code == EXIT_REGRESSION, out
    bodies = [c["body"] for c in fake.comments[7]]
    assert [b for b in bodies if b.startswith(COMMENT_MARKER)] == [bodies[-1]] and "regression" in bodies[-1]
    assert bodies[0].startswith("<!-- rag-ci:stale -->")


def test_switching_from_the_job_token_to_a_personal_token_leaves_no_old_verdict(fake, project):
    baseline_push(fake, project)
    assert pr(fake, project, regressed=False)[0] == EXIT_PASS  # posted by github-actions[bot]
    fake.use_personal_token("release-manager")

    pr(fake, project, regressed=True)

    old, new = fake.comments[7]
    assert new["user"]["login"] == "release-manager" and "regression" in new["body"]
    assert old["body"].startswith("<!-- rag-ci:stale -->") and "pass" not in old["body"]


# --- 7. a copy's date is its commit's ------------------------------------------------------
def test_a_copy_named_for_the_future_is_neither_the_newest_nor_today(fake, project):
    baseline_push(fake, project, sha=OLD_SHA)
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "main", MAIN_SHA, event="push")  # a genuine run of a later commit
    fake.advance(91)
    plant(fake, f"20990101T000000Z-{MAIN_SHA}.json.gz", MAIN_SHA)
    plant(fake, f"20990101T000000Z-{MAIN_SHA}-{SIDE_RUN}.json.gz", MAIN_SHA)
    fake.merge_bases[PR_HEAD] = "e" * 40  # no copy at the merge base: the nearest one behind it
    fake.graph.commit("e" * 40, MAIN_SHA)

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert "a time that has not come" in out
    assert (
        f"`{OLD_SHA[:7]}" in fake.comments[7][0]["body"]
        and "(main, data branch, " in fake.comments[7][0]["body"]
    )


def test_a_copy_whose_name_and_commit_disagree_on_the_date_is_not_used(fake, project):
    baseline_push(fake, project, sha=OLD_SHA)
    fake.runs[SIDE_RUN] = FakeRun(SIDE_RUN, "main", MAIN_SHA, event="push")
    fake.advance(91)
    plant(fake, f"20260101T000000Z-{MAIN_SHA}-{SIDE_RUN}.json.gz", MAIN_SHA, date="2025-03-01T00:00:00Z")
    fake.merge_bases[PR_HEAD] = MAIN_SHA

    code, out, _ = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    assert "but the commit that wrote it" in out and "2025-03-01" in out
