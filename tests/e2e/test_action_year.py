"""A year in a real repository, end to end: `python -m rag_ci` as the runner starts it,
against FakeGitHubServer, through a scripted year of a repository's life.

The workflows' own steps are played by the test exactly as .github/workflows/ writes them:
the baseline artifact is uploaded only after a successful rag-ci step (retention 90 days,
later 1 day by an organisation's policy), the PR workflow uploads a fork's saved comment,
rag-ci-comment.yml posts it from `workflow_run`. The RAG is tests/fakes/tiny_rag.py
(TINY_RAG_BROKEN=1 breaks corpus b: a regression), judged judge-free.

What must hold all year: no pull request that regresses against its base branch's last good
baseline passes; no unchanged pull request fails while a baseline exists; every pull request
has one rag-ci comment, and it names its baseline (artifact or data branch, commit); the
history has a line for every baseline run that succeeded (since the data branch was last
deleted). The year also has an adversary and bad luck: a workflow with `contents: write`
plants lenient baseline copies, a history read fails through every retry, a pull request
goes into a release branch, and the merge queue requires the `rag-ci gate` check.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from action_harness import REPO, REPOSITORY, ActionRun, run_action

from fakes.fake_github import FakeGitHubServer, FakeRun
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow

DATA_BRANCH = "rag-ci-data"
QUESTIONS = """\
version: 1
questions:
  - {id: Q-A, question: What is the delay on a?, doc_id: a, sources: [a/x.md], keywords: [10 ms]}
  - {id: Q-B, question: What is the delay on b?, doc_id: b, sources: [b/y.md], keywords: [20 ms]}
"""
CONFIG = """\
questions: questions.yml
corpora: {a: {description: A}, b: {description: B}}
target: {kind: command, command: [python, tiny_rag.py], generator_model: tiny-1, generator_family: tiny, timeout_s: 10,
         pass_env: [TINY_RAG_BROKEN]%s}
metrics: {hit_at_k: {k: 5}, keyword_coverage: {threshold: 0.5}}
"""
FAILING_BUILD = ", build: ['python -c \"import sys; sys.exit(3)\"']"  # a baseline job that fails


def sha(n: int) -> str:
    return f"{n:02x}" * 20


def project(root: Path, *, failing_build: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tests" / "fakes" / "tiny_rag.py", root / "tiny_rag.py")
    (root / "questions.yml").write_text(QUESTIONS)
    (root / "rag-ci.yml").write_text(CONFIG % (FAILING_BUILD if failing_build else ""))
    return root


@dataclasses.dataclass
class Year:
    """The repository's year: the fake GitHub, main's commits, and what the test expects."""

    fake: FakeGitHubServer
    tmp: Path
    token: str
    main: str = ""  # main's tip
    runs: int = 0
    history_expected: list[str] = dataclasses.field(default_factory=list)
    prs: dict[int, str] = dataclasses.field(default_factory=dict)  # number -> head sha
    log: list[str] = dataclasses.field(default_factory=list)

    def workspace(self, name: str, **how) -> Path:
        path = self.tmp / name
        if path.exists():
            shutil.rmtree(path)
        return project(path, **how)

    def act(self, name: str, event_name: str, event: dict, *, env: dict | None = None, **how) -> ActionRun:
        self.runs += 1
        workspace = self.workspace(f"w{self.runs}", **how)
        run = run_action(
            self.fake,
            workspace,
            event_name=event_name,
            event=event,
            token=self.token,
            env={"GITHUB_RUN_ID": str(7000 + self.runs), **(env or {})},
            timeout=60,
        )
        self.log.append(f"day {self.fake.day:3}: {name}: exit {run.returncode}")
        return run

    # --- the default branch ----------------------------------------------------------
    def push(
        self, commit: str, *, failing: bool = False, forced_over: str | None = None, retention: int = 90
    ) -> ActionRun:
        """A push to main, its baseline job, and the workflow's upload step (only after success)."""
        before = forced_over or self.main or "0" * 40
        # main's history: on the commit pushed over, or, forced, on the one that commit was built on
        parents = (
            self.fake.graph.parents.get(forced_over, []) if forced_over else [self.main] if self.main else []
        )
        self.fake.graph.commit(commit, *parents, branch="main")
        event = {
            "ref": "refs/heads/main",
            "before": before,
            "after": commit,
            "forced": forced_over is not None,
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        }
        run = self.act(
            f"push {commit[-4:]}{' (failing job)' if failing else ''}", "push", event, failing_build=failing
        )
        self.main = commit
        if run.returncode == 0:
            results = (run.workspace / run.outputs["results-path"]).read_bytes()
            self.fake.upload_artifact(
                {"results.json": results}, run_id=7000 + self.runs, head_sha=commit, retention_days=retention
            )
            self.history_expected.append(commit)
        return run

    # --- pull requests ---------------------------------------------------------------
    def pr_event(self, number: int, *, fork: bool = False, base: tuple[str, str] | None = None) -> dict:
        head = self.prs.setdefault(number, f"{number:04x}" * 10)
        base_ref, base_sha = base or ("main", self.main)
        self.fake.merge_bases[head] = base_sha
        self.fake.graph.commit(head, base_sha)
        return {
            "action": "synchronize",
            "number": number,
            "pull_request": {
                "number": number,
                "head": {
                    "ref": f"feature-{number}",
                    "sha": head,
                    "repo": {"full_name": "contributor/rag" if fork else REPOSITORY},
                },
                "base": {"ref": base_ref, "sha": base_sha, "repo": {"full_name": REPOSITORY}},
            },
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        }

    def pr(
        self,
        number: int,
        *,
        regressed: bool,
        attempt: int = 1,
        fork: bool = False,
        base: tuple[str, str] | None = None,
    ) -> ActionRun:
        env = {"GITHUB_RUN_ATTEMPT": str(attempt), **({"TINY_RAG_BROKEN": "1"} if regressed else {})}
        return self.act(
            f"PR #{number} {'regressed' if regressed else 'unchanged'} (attempt {attempt})",
            "pull_request",
            self.pr_event(number, fork=fork, base=base),
            env=env,
        )

    def merge_group(self, number: int, *, regressed: bool) -> ActionRun:
        head = self.queue_head(number)
        head_ref = f"refs/heads/gh-readonly-queue/main/pr-{number}-{self.main}"
        event = {
            "action": "checks_requested",
            "merge_group": {
                "head_sha": head,
                "head_ref": head_ref,
                "base_sha": self.main,
                "base_ref": "refs/heads/main",
            },
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        }
        return self.act(
            f"merge queue for #{number} {'regressed' if regressed else 'unchanged'}",
            "merge_group",
            event,
            env={
                "GITHUB_SHA": head,
                "GITHUB_REF": head_ref,
                **({"TINY_RAG_BROKEN": "1"} if regressed else {}),
            },
        )

    @staticmethod
    def queue_head(number: int) -> str:
        return f"e{number:03x}" * 10

    def comments(self, number: int) -> list[dict]:
        return [c for c in self.fake.comments.get(number, []) if c["body"].startswith(COMMENT_MARKER)]

    def queue_merges(self, head_sha: str) -> bool:
        """What a merge queue that requires `rag-ci gate` does: merge only when that check run on
        the queue's commit completed with success (no check run: it waits, and never merges)."""
        checks = [
            c
            for c in self.fake.check_runs.values()
            if c["name"] == "rag-ci gate" and c["head_sha"] == head_sha
        ]
        return bool(checks) and checks[-1]["status"] == "completed" and checks[-1]["conclusion"] == "success"

    def history(self) -> list[str]:
        text = (self.fake.file_on_branch(DATA_BRANCH, "eval_history.jsonl") or b"").decode()
        return [json.loads(line)["git_sha"] for line in text.splitlines()]


def gates(run: ActionRun, *, regressed: bool) -> None:
    if regressed:
        assert run.returncode == 1, run.log
        assert run.outputs["verdict"] == "fail"
    else:
        assert run.returncode == 0, run.log
        assert run.outputs["verdict"] == "pass"


def names_its_baseline(year: Year, number: int, source: str, commit: str) -> None:
    [comment] = year.comments(number)
    assert f"`{commit[:7]}" in comment["body"] and f"(main, {source}, " in comment["body"], comment["body"][
        :600
    ]


def test_a_year_in_a_repository(tmp_path, token):
    with FakeGitHubServer(token=token) as fake:
        year = Year(fake, tmp_path, token)
        for chapter in (
            first_baseline_and_pull_requests,
            a_failing_baseline_job_and_a_quiet_main,
            a_forged_copy,
            one_day_retention_and_a_force_push,
            a_merge_queue,
            a_fork_and_an_app,
            a_release_branch,
            deleted_data_branches,
            a_failed_history_read,
            a_wiped_data_branch,
        ):
            chapter(year)
        # Every pull request had one rag-ci comment all year; every good baseline run, a history line.
        for number in [*range(1, 8), *range(10, 18)]:
            [comment] = year.comments(number)
            named = "(main, artifact, " in comment["body"] or "(main, data branch, " in comment["body"]
            assert named or (number == 15 and "The baseline of main is gone" in comment["body"]), (
                number,
                year.log,
            )
        for number, named in (
            (19, "(main, artifact, 1 commit before the merge base, "),
            (20, "(release/1.x, artifact, "),
            (21, "reading `eval_history.jsonl` on `rag-ci-data` failed"),
            (22, "(main, artifact, "),
            (23, "(main, artifact, "),
        ):
            [comment] = year.comments(number)
            assert named in comment["body"], (number, comment["body"][:800])
        assert year.history() == year.history_expected
        print("\n".join(year.log))


def first_baseline_and_pull_requests(year: Year) -> None:
    """January: main's first baseline; the first pull requests gate against its artifact."""
    assert year.push(sha(1)).returncode == 0
    year.fake.advance(1)
    gates(year.pr(1, regressed=False), regressed=False)
    names_its_baseline(year, 1, "artifact", sha(1))
    gates(year.pr(2, regressed=True), regressed=True)
    gates(year.pr(2, regressed=True, attempt=2), regressed=True)  # a re-run of the job: the same comment
    assert len(year.comments(2)) == 1
    gates(year.pr(2, regressed=False), regressed=False)  # fixed: the comment says so, still one
    assert len(year.comments(2)) == 1 and "no regression" in year.comments(2)[0]["body"]


def a_failing_baseline_job_and_a_quiet_main(year: Year) -> None:
    """A push whose baseline job fails (no artifact, no line); then 90 quiet days expire the artifact."""
    year.fake.advance(2)
    assert year.push(sha(2), failing=True).returncode == 2
    gates(year.pr(3, regressed=True), regressed=True)
    names_its_baseline(year, 3, "artifact", sha(1))  # nothing at sha(2): the newest good one
    year.fake.advance(95)
    assert all(a.expired for a in year.fake.artifacts)
    gates(year.pr(4, regressed=True), regressed=True)  # the data branch's copy gates
    gates(year.pr(5, regressed=False), regressed=False)
    names_its_baseline(year, 5, "data branch", sha(1))


def one_day_retention_and_a_force_push(year: Year) -> None:
    """The organisation sets artifact retention to 1 day; later main is force-pushed."""
    assert year.push(sha(3), retention=1).returncode == 0
    year.fake.advance(3)
    gates(year.pr(6, regressed=True), regressed=True)
    names_its_baseline(year, 6, "data branch", sha(3))
    assert year.push(sha(4), forced_over=sha(3)).returncode == 0
    gates(year.pr(7, regressed=True), regressed=True)
    names_its_baseline(year, 7, "artifact", sha(4))


def a_merge_queue(year: Year) -> None:
    """Gated like a pull request against the queue's base; no comment anywhere. The branch requires
    the `rag-ci gate` check: the queue merges the unchanged entry and never the regressing one."""
    comments_before = {n: [c["body"] for c in cs] for n, cs in year.fake.comments.items()}
    gates(year.merge_group(8, regressed=True), regressed=True)
    gates(year.merge_group(9, regressed=False), regressed=False)
    assert {n: [c["body"] for c in cs] for n, cs in year.fake.comments.items()} == comments_before
    assert not year.queue_merges(year.queue_head(8)) and year.queue_merges(year.queue_head(9))


def a_forged_copy(year: Year) -> None:
    """Main's artifacts have expired and its tip's baseline job failed: its merge base has no
    baseline. A collaborator's workflow with `contents: write` plants, in verified commits of
    github-actions[bot] exactly like rag-ci's own, a copy named for that merge base in which every
    question failed: once naming no run, once naming its own successful push run on a side branch.
    Neither is trusted; the genuine copy gates, and an unchanged PR still passes."""
    fake = year.fake
    [genuine] = [p for p in fake.branches[DATA_BRANCH] if p.startswith("baselines/")]
    lenient = json.loads(gzip.decompress(fake.file_on_branch(DATA_BRANCH, genuine)))
    lenient["meta"]["git_sha"] = year.main
    for q in lenient["questions"]:  # every question and metric failed: nothing can regress against it
        q["verdict"] = "fail"
        for m in q["metrics"].values():
            m.update(passed=False, score=0.0)
    fake.runs[8800] = FakeRun(8800, "side", year.main, event="push")
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for name in (f"{now}-{year.main}.json.gz", f"{now}-{year.main}-8800.json.gz"):
        fake.push_commit(
            DATA_BRANCH,
            f"baselines/{name}",
            gzip.compress(json.dumps(lenient).encode()),
            login="github-actions[bot]",
            verified=True,
        )
    planted = year.pr(16, regressed=True)
    gates(planted, regressed=True)
    assert "is not used as the baseline: its name records no workflow run" in planted.log
    names_its_baseline(year, 16, "data branch", sha(1))
    gates(year.pr(17, regressed=False), regressed=False)
    for name in (
        f"{now}-{year.main}.json.gz",
        f"{now}-{year.main}-8800.json.gz",
    ):  # the maintainers, warned, delete them
        fake.branches[DATA_BRANCH].pop(f"baselines/{name}")


def a_release_branch(year: Year) -> None:
    """release/1.x is cut from main. A pull request into it before it has a baseline of its own is
    compared with main's at the commit it was cut from (never a bootstrap pass); a push to it runs
    init's baseline workflow (its trigger covers `release/**`) and makes its own baseline; the
    bootstrap notice's other advice, a dispatched re-baseline of rag-ci-full.yml on the branch,
    makes one too; pull requests into it gate against the newest."""
    cut = "d1" * 20
    year.fake.graph.commit(cut, year.main, branch="release/1.x")
    first = year.pr(19, regressed=True, base=("release/1.x", cut))
    gates(first, regressed=True)
    assert "bootstrap" not in first.outputs["verdict"]
    [comment] = year.comments(19)
    assert f"`{year.main[:7]}" in comment["body"], comment["body"][:600]

    pushed = "d2" * 20  # a fix merged into the release branch: its baseline job runs
    year.fake.graph.commit(pushed, cut, branch="release/1.x")
    push = year.act(
        "push to release/1.x",
        "push",
        {
            "ref": "refs/heads/release/1.x",
            "before": cut,
            "after": pushed,
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        },
    )
    assert push.returncode == 0 and push.outputs["verdict"] == "baseline", push.log
    year.fake.upload_artifact(
        {"results.json": (push.workspace / push.outputs["results-path"]).read_bytes()},
        run_id=7000 + year.runs,
        head_sha=pushed,
        branch="release/1.x",
    )
    gates(year.pr(20, regressed=True, base=("release/1.x", pushed)), regressed=True)
    gates(year.pr(20, regressed=False, base=("release/1.x", pushed)), regressed=False)
    [comment] = year.comments(20)
    assert f"`{pushed[:7]}" in comment["body"] and "(release/1.x, artifact, " in comment["body"]

    # `gh workflow run rag-ci-full.yml --ref release/1.x -f rebaseline=true`, as the notice says
    dispatch = year.act(
        "workflow_dispatch (rebaseline) on release/1.x",
        "workflow_dispatch",
        {
            "ref": "refs/heads/release/1.x",
            "after": pushed,
            "inputs": {"rebaseline": True},
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        },
        env={"RAG_CI_REBASELINE": "true"},
    )
    assert dispatch.returncode == 0 and dispatch.outputs["verdict"] == "rebaseline", dispatch.log
    year.fake.upload_artifact(
        {"results.json": (dispatch.workspace / dispatch.outputs["results-path"]).read_bytes()},
        run_id=7000 + year.runs,
        head_sha=pushed,
        branch="release/1.x",
        event="workflow_dispatch",
    )
    rebaselined = 7000 + year.runs
    year.fake.runs[rebaselined].path = ".github/workflows/rag-ci-full.yml"
    gates(year.pr(20, regressed=True, base=("release/1.x", pushed)), regressed=True)
    [comment] = year.comments(20)
    assert f"/actions/runs/{rebaselined})" in comment["body"], comment["body"][:800]  # the newer of the two


def a_failed_history_read(year: Year) -> None:
    """Main's artifacts are deleted and its copies removed by hand; the history alone shows a
    baseline existed, and reading it fails through every retry (502): exit 2, never a bootstrap."""
    assert year.push(sha(6)).returncode == 0
    for artifact in list(year.fake.artifacts):
        year.fake.delete_artifact(artifact)
    for path in [p for p in year.fake.branches[DATA_BRANCH] if p.startswith("baselines/")]:
        year.fake.branches[DATA_BRANCH].pop(path)
    year.fake.inject("GET", f"/repos/{REPOSITORY}/contents/eval_history.jsonl", 502, "Bad Gateway", times=6)
    run = year.pr(21, regressed=True)
    assert run.returncode == 2, run.log
    assert "Could not tell whether a baseline exists" in run.summary


def a_fork_and_an_app(year: Year) -> None:
    """A fork's read-only run saves its comment, rag-ci-comment.yml posts it; an App's token comments."""
    fake = year.fake
    fake.read_only = True
    fork = year.pr(10, regressed=True, fork=True)
    fake.read_only = False
    gates(fork, regressed=True)
    assert year.comments(10) == []
    saved = fake.upload_artifact(
        {"comment.md": (fork.workspace / "rag-ci-output" / "comment.md").read_bytes()},
        run_id=7000 + year.runs,
        head_sha=year.prs[10],
        name="rag-ci-comment",
        branch="feature-10",
        event="pull_request",
        retention_days=1,
    )
    fake.add_pull(10, head_owner="contributor", head_branch="feature-10", head_sha=year.prs[10])
    posted = year.act(
        "workflow_run comment for #10",
        "workflow_run",
        {
            "action": "completed",
            "workflow_run": {
                "id": saved.run_id,
                "event": "pull_request",
                "head_branch": "feature-10",
                "head_sha": year.prs[10],
                "pull_requests": [],
                "head_repository": {"full_name": "contributor/rag", "owner": {"login": "contributor"}},
            },
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        },
    )
    assert posted.returncode == 0, posted.log
    names_its_baseline(year, 10, "artifact", sha(4))
    fake.use_app_token("acme-rag-ci")
    gates(year.pr(11, regressed=True), regressed=True)
    gates(year.pr(11, regressed=False), regressed=False)
    assert [c["user"]["login"] for c in year.comments(11)] == ["acme-rag-ci[bot]"]
    fake.bot_login, fake.user_endpoint_forbidden = "github-actions[bot]", True


def deleted_data_branches(year: Year) -> None:
    """The artifact gates without the data branch, the next push rebuilds it; in December both are
    gone while a baseline existed (expired artifacts say so): the check fails, never a bootstrap pass."""
    year.fake.delete_branch(DATA_BRANCH)
    year.history_expected.clear()
    gates(year.pr(12, regressed=True), regressed=True)
    names_its_baseline(year, 12, "artifact", sha(4))
    assert year.push(sha(5)).returncode == 0
    year.fake.advance(120)
    gates(year.pr(13, regressed=True), regressed=True)
    gates(year.pr(14, regressed=False), regressed=False)
    names_its_baseline(year, 14, "data branch", sha(5))
    year.fake.delete_branch(DATA_BRANCH)
    year.history_expected.clear()
    lost = year.pr(15, regressed=True)
    assert lost.returncode == 2, lost.log
    assert "The baseline of main is gone" in lost.summary and "rebaseline: true" in lost.summary


def a_wiped_data_branch(year: Year) -> None:
    """Someone with write access deletes every artifact and pushes commits that remove the copies and
    the history from the data branch: the next pull request fails (exit 2) naming the commit, never
    a bootstrap pass; the admin's re-baseline (workflow_dispatch, rebaseline) makes the gate work again."""
    fake = year.fake
    assert year.push(sha(7)).returncode == 0
    for artifact in list(fake.artifacts):
        fake.delete_artifact(artifact)
    removals = [
        fake.push_removal(DATA_BRANCH, path, login="mallory")
        for path in sorted(fake.branches[DATA_BRANCH])
        if path.startswith("baselines/") or path == "eval_history.jsonl"
    ]
    wiped = year.pr(22, regressed=False)
    assert wiped.returncode == 2, wiped.log
    assert "The baseline of main is gone" in wiped.summary, wiped.summary
    assert any(f"{removal.sha[:12]} (mallory, unverified)" in wiped.summary for removal in removals), (
        wiped.summary
    )
    dispatch = year.act(
        "workflow_dispatch (rebaseline) on main",
        "workflow_dispatch",
        {
            "ref": "refs/heads/main",
            "after": year.main,
            "inputs": {"rebaseline": True},
            "repository": {"full_name": REPOSITORY, "default_branch": "main"},
        },
        env={"RAG_CI_REBASELINE": "true"},
    )
    assert dispatch.returncode == 0, dispatch.log
    fake.upload_artifact(
        {"results.json": (dispatch.workspace / dispatch.outputs["results-path"]).read_bytes()},
        run_id=7000 + year.runs,
        head_sha=year.main,
        event="workflow_dispatch",
    )
    fake.runs[7000 + year.runs].path = ".github/workflows/rag-ci-full.yml"
    year.history_expected[:] = [year.main]  # the wipe took the history; the re-baseline starts it again
    gates(year.pr(22, regressed=True), regressed=True)
    gates(year.pr(23, regressed=False), regressed=False)
