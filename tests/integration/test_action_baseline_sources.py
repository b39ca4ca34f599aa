"""Where a pull request's baseline comes from once artifacts expire: the data
branch's copy, or, when a baseline existed and is gone, exit 2 with the fix; merge queues;
the sticky comment under an App's or a personal token.

The runs are canned (no RAG is started); GitHub is FakeGitHubServer.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from builders import metric, question, run
from fakes.fake_github import FakeGitHubServer
from rag_ci.action.entry import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION, action
from rag_ci.action.settings import Secret, Settings
from rag_ci.files.results_file import save_results
from rag_ci.github.baseline_copies import KEPT_COPIES
from rag_ci.github.client import connect
from rag_ci.github.comments import COMMENT_MARKER
from rag_ci.github.workflow import Runner

MAIN_SHA, PR_HEAD = "a" * 40, "1" * 40
MAIN = {"repository": {"default_branch": "main"}}


def results(*, regressed: bool = False, sha: str = MAIN_SHA, pr: int | None = None):
    q2 = (
        question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)])
        if regressed
        else question("Q2", metrics=[metric("hit_at_k", 1.0)])
    )
    result = run(question("Q1", metrics=[metric("hit_at_k", 1.0)]), q2, sha=sha)
    return result.model_copy(update={"meta": result.meta.model_copy(update={"pr_number": pr})})


@pytest.fixture
def fake():
    with FakeGitHubServer(token="t0ken") as server:
        server.merge_bases[PR_HEAD] = MAIN_SHA
        server.graph.line("c" * 40, MAIN_SHA, branch="main")  # main: an older commit, then its tip
        yield server


@pytest.fixture
def project(tiny_project, tmp_path) -> Path:
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}")
    return tmp_path


def act(
    fake,
    project: Path,
    event_name: str,
    event: dict,
    head,
    *,
    sha: str = "f" * 40,
    ref: str = "refs/heads/main",
    run_id: int = 1,
    retries: int = 5,
    **inputs,
):
    """Run action() once with `head` as the run's result; returns (exit code, log, summary)."""
    for name in ("summary.md", "output.txt"):
        (project / name).write_text("")
    settings = Settings(
        event_name=event_name,
        event=event,
        repository="acme/rag",
        ref=ref,
        sha=sha,
        run_id=str(run_id),
        workspace=project,
        step_summary=project / "summary.md",
        github_output=project / "output.txt",
        github_token=Secret("t0ken"),
        **inputs,
    )
    github = connect(
        fake.url,
        Secret("t0ken"),
        "acme/rag",
        seconds_between_requests=0,
        retries=retries,
        comment_author=settings.comment_author,
    )
    stream = io.StringIO()
    runner = Runner(
        step_summary=settings.step_summary,
        github_output=settings.github_output,
        in_actions=True,
        stream=stream,
    )

    def evaluate(project, output, cache_baseline, full, context, confirm_each):
        save_results(output, head)
        return head

    code = action(settings, github, runner, evaluate=evaluate)
    return code, stream.getvalue(), (project / "summary.md").read_text()


def baseline_push(fake, project, sha: str = MAIN_SHA):
    """A push to main: its run (GITHUB_RUN_ID) stores the baseline copy on the data branch; the
    workflow uploads the artifact, and the run ends in success."""
    run_id = 7000 + len(fake.runs)
    code, out, _ = act(
        fake,
        project,
        "push",
        {"ref": "refs/heads/main", "before": "0" * 40, "after": sha, **MAIN},
        results(sha=sha),
        sha=sha,
        run_id=run_id,
    )
    assert code == EXIT_PASS, out
    data = (project / "rag-ci-output" / "results.json").read_bytes()
    return fake.upload_artifact({"results.json": data}, run_id=run_id, head_sha=sha)


def pr_event(number: int = 7) -> dict:
    return {
        "pull_request": {
            "number": number,
            "head": {"sha": PR_HEAD, "repo": {"full_name": "acme/rag"}},
            "base": {"ref": "main", "sha": MAIN_SHA},
        },
        **MAIN,
    }


def pr(fake, project, *, regressed: bool, **inputs):
    return act(
        fake,
        project,
        "pull_request",
        pr_event(),
        results(regressed=regressed, sha="f" * 40, pr=7),
        ref="refs/pull/7/merge",
        **inputs,
    )


def copies(fake) -> list[str]:
    return sorted(p for p in fake.branches.get("rag-ci-data", {}) if p.startswith("baselines/"))


def test_a_baseline_run_stores_its_results_gzipped_on_the_data_branch(fake, project):
    baseline_push(fake, project)
    [path] = copies(fake)
    assert path.endswith(f"-{MAIN_SHA}-7000.json.gz")  # the commit, and the run that wrote it
    [made] = [c for c in fake.file_commits if c.path == path]
    assert made.message == f"rag-ci: baseline of {MAIN_SHA[:12]} (workflow run 7000, push on main)"
    stored = json.loads(gzip.decompress(fake.file_on_branch("rag-ci-data", path)))
    assert stored["meta"]["git_sha"] == MAIN_SHA and [q["id"] for q in stored["questions"]] == ["Q1", "Q2"]
    assert len(fake.file_on_branch("rag-ci-data", "eval_history.jsonl").splitlines()) == 1


def test_an_expired_artifact_with_a_data_branch_copy_gates_as_if_the_artifact_were_there(fake, project):
    baseline_push(fake, project)
    fake.advance(91)  # the artifact's 90 days are over

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_REGRESSION, out
    body = fake.comments[7][0]["body"]
    assert "regression" in body and f"`{MAIN_SHA[:7]}" in body and "(main, data branch, " in body
    assert pr(fake, project, regressed=False)[0] == EXIT_PASS  # an unchanged PR passes against it


def test_with_neither_artifact_nor_copy_but_a_history_the_check_fails_and_says_how_to_fix_it(fake, project):
    baseline_push(fake, project)
    fake.advance(91)
    for path in copies(fake):  # the copies are gone (deleted by hand); the history is left
        fake.branches["rag-ci-data"].pop(path)

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    assert (
        "The baseline of main is gone" in summary
        and "has expired" in summary
        and "eval_history.jsonl" in summary
    )
    assert "`workflow_dispatch` and `rebaseline: true`" in summary
    assert "not evaluated" in fake.comments[7][0]["body"]


def test_only_when_no_baseline_ever_existed_a_pull_request_bootstraps(fake, project):
    code, out, summary = pr(fake, project, regressed=True)
    assert code == EXIT_PASS, out
    assert "bootstrap" in summary


def test_a_copy_pushed_by_someone_else_is_not_a_baseline(fake, project):
    baseline_push(fake, project)
    fake.advance(91)
    [path] = copies(fake)
    lenient = json.loads(gzip.decompress(fake.file_on_branch("rag-ci-data", path)))
    for q in lenient["questions"]:
        q["verdict"] = "fail"  # a baseline where everything failed lets any regression through
    fake.push_commit(
        "rag-ci-data", path, gzip.compress(json.dumps(lenient).encode()), login="mallory", verified=True
    )

    code, out, summary = pr(fake, project, regressed=True)

    assert code == EXIT_ERROR, out
    assert "not used as the baseline" in out and "by mallory" in out


def test_the_artifact_at_the_merge_base_is_used_before_any_copy(fake, project):
    baseline_push(fake, project)
    before = len(fake.requests)
    code, out, _ = pr(fake, project, regressed=True)
    assert code == EXIT_REGRESSION
    assert "(main, artifact, " in fake.comments[7][0]["body"]
    assert not any("baselines" in r.path for r in fake.requests[before:])


def test_only_the_newest_copies_are_kept_and_a_rerun_replaces_its_commits_copy(fake, project):
    for i in range(KEPT_COPIES + 2):
        baseline_push(fake, project, sha=f"{i:040x}")
    baseline_push(fake, project, sha=f"{KEPT_COPIES + 1:040x}")  # the last run again (run_attempt 2)
    kept = copies(fake)
    assert len(kept) == KEPT_COPIES
    assert f"{KEPT_COPIES + 1:040x}-" in kept[-1] and not any(f"-{0:040x}-" in p for p in kept)


MERGE_GROUP = {
    "merge_group": {
        "head_sha": "9" * 40,
        "head_ref": "refs/heads/gh-readonly-queue/main/pr-7-" + "9" * 40,
        "base_sha": MAIN_SHA,
        "base_ref": "refs/heads/main",
    },
    **MAIN,
}


@pytest.mark.parametrize("regressed,expected", [(True, EXIT_REGRESSION), (False, EXIT_PASS)])
def test_a_merge_group_gates_against_the_queues_base_with_the_check_run_on_the_queues_commit(
    fake, project, regressed, expected
):
    baseline_push(fake, project)
    fake.upload_artifact(
        {"results.json": results(sha="8" * 40, regressed=True).model_dump_json()},
        run_id=99,
        head_sha="8" * 40,
    )
    before = len(fake.requests)

    code, out, summary = act(
        fake,
        project,
        "merge_group",
        MERGE_GROUP,
        results(regressed=regressed, sha="9" * 40),
        sha="9" * 40,
        ref="refs/heads/gh-readonly-queue/main/pr-7-" + "9" * 40,
    )

    assert code == expected, out
    assert "mode: merge-queue" in out
    assert fake.comments == {}
    assert "## rag-ci" in summary and f"`{MAIN_SHA[:7]}" in summary  # the base_sha's baseline, not the newest
    # No history line, no baseline copy; the `rag-ci gate` check run a queue can require, on the queue's commit.
    assert [r.route for r in fake.requests[before:] if r.method != "GET"] == [
        "POST /repos/acme/rag/check-runs"
    ]
    [check] = fake.check_runs.values()
    assert check["name"] == "rag-ci gate" and check["head_sha"] == "9" * 40
    assert check["conclusion"] == ("failure" if regressed else "success")


def test_an_app_tokens_comment_is_found_again_and_edited(fake, project):
    baseline_push(fake, project)
    fake.use_app_token("acme-rag-ci")
    fake.add_comment(7, f"quoting: {COMMENT_MARKER}", login="reviewer")

    for regressed in (True, False):
        pr(fake, project, regressed=regressed)

    ours = [c for c in fake.comments[7] if c["user"]["login"] == "acme-rag-ci[bot]"]
    assert len(ours) == 1 and "no regression" in ours[0]["body"]
    assert fake.comments[7][0]["body"] == f"quoting: {COMMENT_MARKER}"


def test_a_named_comment_author_is_the_only_account_whose_comment_is_edited(fake, project):
    baseline_push(fake, project)
    fake.use_app_token("acme-rag-ci")
    fake.add_comment(7, f"{COMMENT_MARKER}\nby another app", login="other-app[bot]")

    for regressed in (True, False):
        pr(fake, project, regressed=regressed, comment_author="acme-rag-ci[bot]")

    assert [c["user"]["login"] for c in fake.comments[7]] == ["other-app[bot]", "acme-rag-ci[bot]"]
    assert fake.comments[7][0]["body"] == f"{COMMENT_MARKER}\nby another app"
    assert not any(r.path == "/user" for r in fake.requests)  # named: nothing to ask


def test_a_personal_tokens_comment_is_found_by_its_login(fake, project):
    baseline_push(fake, project)
    fake.use_personal_token("release-manager")
    for regressed in (True, False):
        pr(fake, project, regressed=regressed)
    assert [c["user"]["login"] for c in fake.comments[7]] == ["release-manager"]


def test_under_an_apps_token_the_job_tokens_history_lines_are_still_the_actions(fake):
    # The baseline workflow writes with GITHUB_TOKEN; the pull requests comment with an App's token.
    writer = connect(fake.url, Secret("t0ken"), "acme/rag", seconds_between_requests=0)
    writer.append_data_line(
        "rag-ci-data", "eval_history.jsonl", '{"flaky": {"Q": [1, 4]}}', message="rag-ci: history"
    )
    fake.push_commit(
        "rag-ci-data",
        "eval_history.jsonl",
        fake.file_on_branch("rag-ci-data", "eval_history.jsonl") + b'{"forged": 1}\n',
        login="mallory",
        verified=True,
    )
    fake.use_app_token("acme-rag-ci")
    reader = connect(
        fake.url, Secret("t0ken"), "acme/rag", seconds_between_requests=0, comment_author="acme-rag-ci[bot]"
    )

    assert reader.lines_written_by_us(
        "rag-ci-data", "eval_history.jsonl", {'{"flaky": {"Q": [1, 4]}}', '{"forged": 1}'}
    ) == {'{"flaky": {"Q": [1, 4]}}'}


def test_a_commit_of_main_without_a_history_line_is_named_by_the_next_push(fake, project):
    baseline_push(fake, project, sha="1" * 40)
    code, out, _ = act(
        fake,
        project,
        "push",
        {"ref": "refs/heads/main", "before": "1" * 40, "after": "2" * 40, **MAIN},
        results(sha="2" * 40),
        sha="2" * 40,
    )
    assert code == EXIT_PASS and "has no line" not in out
    # "3" * 40's run failed (or was cancelled): the push after it says so.
    code, out, _ = act(
        fake,
        project,
        "push",
        {"ref": "refs/heads/main", "before": "3" * 40, "after": "4" * 40, **MAIN},
        results(sha="4" * 40),
        sha="4" * 40,
    )
    assert code == EXIT_PASS
    assert (
        "::notice title=rag-ci%3A history::eval_history.jsonl on rag-ci-data has no line for 333333333333"
        in out
    )


def test_a_damaged_copy_fails_the_check_instead_of_passing(fake, project):
    baseline_push(fake, project)
    fake.advance(91)
    [path] = copies(fake)
    # the action's, damaged
    fake.push_commit("rag-ci-data", path, b"not gzip", login="github-actions[bot]", verified=True)

    code, out, summary = pr(fake, project, regressed=False)

    assert code == EXIT_ERROR, out
    assert (
        "The baseline is unusable" in summary
        and "not a gzip file" in summary
        and "rebaseline: true" in summary
    )
