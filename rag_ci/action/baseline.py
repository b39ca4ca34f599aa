"""The baseline as the action finds it, and how a repository using the action replaces it.

Which baseline (docs/action.md, "Which baseline"): the nearest trusted ancestor of the commit
compared from, on the branch compared with or on the default branch it was cut from
(rag_ci.action.nearest_baseline): a `rag-ci-baseline` artifact, else a copy on the data branch
(the default branch's only). A pull request into `release/1.x` without a baseline of its own is
compared with main's at the commit the branch was cut from.

None of them, and no trace of a baseline ever existing (no expired artifact, no history line, no
copy or commit of one on the data branch, no refused candidate): bootstrap, the first pull request
passes. None of them but such a trace: the baseline was lost (expired, deleted, wiped, refused),
and the check fails (exit 2) naming why, with the one workflow run that makes a new one, so an
expired or wiped baseline never turns the gate into a pass. Every lookup that decides "no trace"
fails closed: a GitHub call that failed (after the client's retries) is exit 2 naming the call,
never "nothing found". The traces, and the words of a bootstrap and of a lost baseline, are
rag_ci.action.baseline_traces'.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rag_ci.action.baseline_traces import (
    baseline_runs,
    data_branch_wipes,
    lookup_failed,
    lost_message,
    past_baselines,
)
from rag_ci.action.modes import BaseBranch, BaselineUse, Plan
from rag_ci.action.nearest_baseline import (
    ARTIFACT,
    Candidate,
    Search,
    artifact_candidates,
    copy_candidates,
)
from rag_ci.action.outputs import RESULTS_FILE
from rag_ci.action.settings import Settings
from rag_ci.core.comparison.history import HISTORY_FILE
from rag_ci.core.reporting.escaping import escape_md
from rag_ci.core.results import RunResult
from rag_ci.errors import RagCiError
from rag_ci.files.results_file import keep_until_exit, load_results
from rag_ci.gate import REBASELINE_HINT
from rag_ci.github.artifacts import ArtifactRef
from rag_ci.github.baseline_copies import KEPT_COPIES, BaselineCopy
from rag_ci.github.client import GitHubError, GitHubRepo
from rag_ci.github.workflow import Runner

# What the core's neutral REBASELINE_HINT means for a repository using the action.
ACTIONS_REBASELINE_HINT = (
    "Re-baseline: run the rag-ci workflow on the base branch with `workflow_dispatch` and "
    "`rebaseline: true` (or run `rag-ci run` on main and replace the baseline artifact)."
)


@dataclass(frozen=True)
class FoundBaseline:
    """The baseline and where it came from: the commit, branch, run and source the comment names,
    and how many commits lie between it and the commit compared from (`since`, e.g. "the merge base")."""

    result: RunResult
    sha: str | None  # the commit the baseline run evaluated
    branch: str
    run_id: int | None
    source: str = ARTIFACT  # ARTIFACT or DATA_BRANCH
    made_at: datetime | None = None  # when the artifact was uploaded, or the copy stored
    distance: int = 0
    since: str = "the merge base"
    refused: tuple[str, ...] = ()  # candidates nearer or newer that rag-ci would not trust, each with why

    def described(self, now: datetime | None = None) -> str:
        """'main, artifact, 2 commits before the merge base, 3 days old': what the comment puts after
        the baseline's commit."""
        words = [self.branch, self.source]
        if self.distance:
            words.append(f"{self.distance} commit{'s' if self.distance != 1 else ''} before {self.since}")
        if self.made_at is not None:
            made = self.made_at if self.made_at.tzinfo else self.made_at.replace(tzinfo=UTC)
            days = max(((now or datetime.now(UTC)) - made).days, 0)
            words.append("today" if days == 0 else f"{days} day{'s' if days != 1 else ''} old")
        return ", ".join(words)


def refused_note(refused: tuple[str, ...]) -> str:
    """The comment's and the check run's note on candidates refused as the baseline ("" for none):
    a refusal is news for the reader, not only for the log."""
    if not refused:
        return ""
    items = "".join(f"\n- {escape_md(why, 400)}" for why in refused[:5])
    return (
        f'\n\n**Refused as the baseline** ({len(refused)}; docs/action.md, "Who can plant a baseline"):'
        f"{items}\n"
    )


def in_actions_words(message: str) -> str:
    """A core message with its re-baseline hint told the action's way."""
    return message.replace(REBASELINE_HINT, ACTIONS_REBASELINE_HINT)


def find_baseline(
    plan: Plan,
    settings: Settings,
    github: GitHubRepo,
    runner: Runner,
    *,
    history_lines: Callable[[str], int] = lambda branch: 0,
) -> FoundBaseline | None:
    """The baseline the plan asks for: compared with, only a verdict cache, or none.
    `history_lines(branch)`: how many lines of the data branch's history are that branch's (a trace
    of past baselines); it raises when the history cannot be read."""
    if plan.baseline is BaselineUse.NONE:
        return None
    s = settings
    default = s.default_branch or "main"
    tip: Callable[[], str | None]
    if plan.base_branch is BaseBranch.PULL_REQUEST_BASE:
        if s.pr_number is None or not s.pr_base_ref:
            raise RagCiError("mode pr needs a pull_request event (no pull_request in the event payload)")
        branch, since = s.pr_base_ref, "the merge base"

        def tip() -> str | None:  # the commit the pull request branched from
            return github.merge_base(branch, s.pr_head_sha) if s.pr_head_sha else None
    elif plan.base_branch is BaseBranch.MERGE_QUEUE_BASE:
        if not s.pr_base_ref or not s.pr_base_sha:
            raise RagCiError(
                "the merge-queue mode needs a merge_group event (no merge_group.base_ref/base_sha in the payload)"
            )
        branch, since = s.pr_base_ref, "the queue's base"

        def tip() -> str | None:  # the queue builds its commit on this one
            return s.pr_base_sha
    else:  # a push or a full run: this branch's baseline (a release branch's own, else main's)
        branch = s.branch or default
        since = "the commit pushed over" if s.push_before_sha else "this commit"

        def tip() -> str | None:
            return s.push_before_sha or s.sha

    search = Search(github, branch, default, tip)
    finder = BaselineFinder(settings, github, runner, search, since)
    if plan.baseline is BaselineUse.CACHE:
        return finder.as_cache()
    return finder.find(history_lines)


class BaselineFinder:
    """The nearest trusted artifact or copy (rag_ci.action.nearest_baseline), read and checked."""

    def __init__(self, settings: Settings, github: GitHubRepo, runner: Runner, search: Search, since: str):
        self.settings, self.github, self.runner, self.search, self.since = (
            settings,
            github,
            runner,
            search,
            since,
        )
        self.branch = search.branch
        self.trace: list[str] = []  # what shows that a baseline existed once

    def find(self, history_lines: Callable[[str], int] | None) -> FoundBaseline | None:
        """The baseline; None only when none ever existed (bootstrap). A baseline that exists but
        cannot be read, or that was lost, raises: passing as "bootstrap" would let a PR through ungated.
        Without `history_lines` (a verdict cache only) no trace is looked for: None."""
        search, name = self.search, self.settings.baseline_artifact
        artifacts = artifact_candidates(self.github.baseline_artifacts(name), search.branches)
        vetted: set[int] = set()
        if artifacts:  # the usual case, one run read: the artifact of this branch at the tip itself
            tip = search.tip()
            for candidate in [a for a in artifacts if a.sha == tip and a.branch == self.branch][:2]:
                vetted.add(id(candidate))
                if (problem := self.problem(candidate)) is None:
                    return self.read(candidate, 0)
                search.refused.append(f"{candidate.named}: {problem}")
        candidates = artifacts + self.copies()
        found = search.nearest(candidates, self.problem, vetted) if candidates else None
        if found is not None:
            return self.read(*found)
        self.runner.info(
            f"[rag-ci] no trusted baseline of {' or '.join(search.branches)} on an ancestor of "
            f"{(search.tip() or self.branch)[:12]} ({len(candidates)} candidate(s))"
        )
        if history_lines is None:
            return None
        self.trace.extend(search.refused)
        self.trace.extend(
            f"{c.named} is not on the history of {(search.tip() or self.branch)[:12]}"
            for c in search.off_history[:3]
        )
        for branch in search.branches:
            self.trace.extend(past_baselines(self.settings, self.github, branch, history_lines))
        if not self.trace:
            self.trace.extend(data_branch_wipes(self.settings, self.github))
        if not self.trace:
            self.trace.extend(baseline_runs(self.settings, self.github, search.branches))
        if not self.trace:
            return None
        raise RagCiError(lost_message(self.settings, self.branch, self.trace, search.refused))

    def as_cache(self) -> FoundBaseline | None:
        """On a push the previous baseline only saves judge calls: without it the run is
        slower, not wrong, so a problem getting it is a warning."""
        try:
            return self.find(None)
        except GitHubError as exc:
            self.runner.warning(f"previous baseline not used as verdict cache: {exc}")
        except RagCiError as exc:
            self.runner.info(f"[rag-ci] previous baseline not used as verdict cache: {exc}")
        return None

    def copies(self) -> list[Candidate]:
        """The data branch's copies: the default branch's baselines (rag-ci writes no other)."""
        data_branch = self.settings.data_branch
        try:
            listed = self.github.list_baseline_copies(data_branch)
        except GitHubError as exc:
            raise lookup_failed(f"listing the baseline copies on `{data_branch}`", exc) from None
        return copy_candidates(listed, self.search.default_branch)

    def problem(self, candidate: Candidate) -> str | None:
        """None for a candidate a baseline run wrote (rag_ci.action.nearest_baseline); else why not,
        also in the log as a warning."""
        s = self.settings
        try:
            problem = None
            if candidate.copy is not None:
                problem = self.github.baseline_copy_problem(s.data_branch, candidate.copy, datetime.now(UTC))
                if problem is None and candidate.run_id is None:
                    problem = "its name records no workflow run (written by hand, or by a rag-ci before 1.1)"
            if problem is None:
                facts = self.github.workflow_run(candidate.run_id or 0)
                problem = (
                    f"run {candidate.run_id} does not exist"
                    if facts is None
                    else facts.problem(
                        self.github.repository,
                        branch=candidate.branch,
                        sha=candidate.sha,
                        workflows=s.baseline_workflows,
                    )
                )
        except GitHubError as exc:
            raise lookup_failed(f"checking who wrote {candidate.named}", exc) from None
        if problem is not None:
            self.runner.warning(
                f"{candidate.named} is not used as the baseline: {problem}. A baseline counts only when a "
                f"successful push, dispatch or schedule run of a baseline workflow of {candidate.branch} at its "
                'commit wrote it (docs/action.md, "Who can plant a baseline")',
                title="rag-ci: baseline refused",
            )
        return problem

    def read(self, candidate: Candidate, distance: int) -> FoundBaseline:
        if candidate.branch != self.branch:
            self.runner.info(
                f"[rag-ci] {self.branch} has no baseline of its own on this history: compared with "
                f"{candidate.branch}'s at {candidate.sha[:12]}, where {self.branch} was cut from it"
            )
        if candidate.artifact is not None:
            result = self.from_artifact(candidate.artifact)
        else:
            assert candidate.copy is not None
            result = self.from_copy(candidate.copy, candidate.branch)
        return FoundBaseline(
            result,
            candidate.sha,
            candidate.branch,
            candidate.run_id,
            candidate.source,
            candidate.made_at,
            distance,
            self.since,
            tuple(self.search.refused),
        )

    def from_artifact(self, artifact: ArtifactRef) -> RunResult:
        name = self.settings.baseline_artifact
        self.runner.info(
            f"[rag-ci] baseline: artifact #{artifact.id} from run {artifact.run_id} at {(artifact.head_sha or '?')[:12]}"
        )
        where = f"the `{name}` artifact #{artifact.id} (run {artifact.run_id})"
        with tempfile.TemporaryDirectory(prefix="rag-ci-baseline-") as tmp:
            path = self.github.download_file(artifact, RESULTS_FILE, Path(tmp) / RESULTS_FILE)
            if path is None:
                raise RagCiError(
                    f"The baseline is unusable: {where} holds no {RESULTS_FILE}.\n{ACTIONS_REBASELINE_HINT}"
                )
            return _load(path, where)

    def from_copy(self, copy: BaselineCopy, branch: str) -> RunResult:
        data_branch = self.settings.data_branch
        where = f"the copy `{copy.path}` on the `{data_branch}` branch"
        self.runner.info(f"[rag-ci] baseline: {where} (stored {copy.stored_at:%Y-%m-%d})")
        try:
            text = self.github.read_baseline_copy(data_branch, copy)
        except GitHubError as exc:
            raise RagCiError(f"The baseline is unusable: {where}: {exc}\n{ACTIONS_REBASELINE_HINT}") from None
        with tempfile.TemporaryDirectory(prefix="rag-ci-baseline-") as tmp:
            path = Path(tmp) / RESULTS_FILE
            path.write_bytes(text)
            baseline = _load(path, where)
        if baseline.meta.git_sha != copy.commit or baseline.meta.pr_number is not None:
            raise RagCiError(
                f"The baseline is unusable: {where} holds the results of commit {baseline.meta.git_sha or 'unknown'}"
                f"{' of a pull request' if baseline.meta.pr_number is not None else ''}, not of {copy.commit[:12]} "
                f"on {branch}.\n{ACTIONS_REBASELINE_HINT}"
            )
        return baseline


def _load(path: Path, where: str) -> RunResult:
    try:
        baseline = keep_until_exit(load_results(path, what="baseline"))
    except RagCiError as exc:  # another schema version, or a damaged file
        raise RagCiError(f"The baseline is unusable: {where}: {exc}\n{ACTIONS_REBASELINE_HINT}") from None
    if baseline.meta.broken:  # uploaded by hand, or by an older rag-ci: never compare with it
        raise RagCiError(
            f"The baseline is unusable: {where} is a broken run, not a result: {baseline.meta.broken}\n{ACTIONS_REBASELINE_HINT}"
        )
    return baseline


def store_baseline_copy(settings: Settings, github: GitHubRepo, runner: Runner, results: Path) -> None:
    """Keep this run's results.json (which becomes the baseline) on the data branch too, so a
    pull request still has it once the artifact has expired. A failure is a warning: the
    artifact is still uploaded by the workflow."""
    s = settings
    if not s.sha:
        runner.warning("baseline not copied to the data branch: GITHUB_SHA is not set")
        return
    if not (s.run_id or "").isdigit():
        runner.warning(
            "baseline not copied to the data branch: GITHUB_RUN_ID is not set (a copy records the run that wrote it)"
        )
        return
    try:
        copy = github.store_baseline_copy(
            s.data_branch,
            s.sha,
            results.read_bytes(),
            datetime.now(UTC),
            KEPT_COPIES,
            int(s.run_id or 0),
            made_by=f"{s.event_name} on {s.branch}",
        )
        runner.info(
            f"[rag-ci] stored the baseline as {copy.path} on branch {s.data_branch} (the last {KEPT_COPIES} are kept)"
        )
    except (GitHubError, OSError) as exc:
        runner.warning(
            f"baseline not copied to {s.data_branch}: {exc}; pull requests fall back on the artifact only "
            "until the next baseline run",
            title="rag-ci: baseline copy",
        )


def missing_history_line(settings: Settings, entries: list[dict]) -> str | None:
    """Why the commit this push replaced has no line in the history, when it has none: the
    baseline workflow has no concurrency group (docs/action.md, "Concurrency"), so a missing
    line is a run that failed, was cancelled or is still running, and the log says which commit."""
    before = settings.push_before_sha
    if not before or settings.event.get("forced") or not entries:
        return None  # not a push, a force-push (the commit left main), or the history's first line
    if any(entry.get("git_sha") == before for entry in entries):
        return None
    return (
        f"{HISTORY_FILE} on {settings.data_branch} has no line for {before[:12]}, the commit before this push: its "
        "baseline run failed, was cancelled or is still running (see the Actions tab; re-run it to add the line)."
    )
