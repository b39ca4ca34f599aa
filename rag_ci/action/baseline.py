"""The baseline as the action finds it, and how a repository using the action replaces it.

Where a baseline comes from, in order (docs/action.md, "Which baseline"):

  1. the `rag-ci-baseline` artifact of a successful trusted run on the base branch at the
     merge base (a pull request) or the commit pushed over (main);
  2. the copy of the baseline at that commit on the data branch (rag_ci.github.baseline_copies);
  3. the newest such artifact, else the newest copy.

A pull request's baseline is its base branch's: a pull request into `release/1.x` is compared
with that branch's artifacts and copies, never main's.

None of them, and no trace of a baseline ever existing on that branch (no expired artifact,
no history line, no copy): bootstrap, the first pull request passes. None of them but such a
trace: the baseline was lost (expired, deleted, unreadable), and the check fails (exit 2) with
the one workflow run that makes a new one, so an expired artifact never turns the gate into a
pass. Every lookup that decides "no trace" fails closed: a GitHub call that failed (after the
client's retries) is exit 2 naming the call, never "nothing found". The traces, and the words of
a bootstrap and of a lost baseline, are rag_ci.action.baseline_traces'.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rag_ci.action.baseline_traces import lookup_failed, lost_message, past_baselines
from rag_ci.action.modes import BaseBranch, BaselineUse, Plan
from rag_ci.action.outputs import RESULTS_FILE
from rag_ci.action.settings import Settings
from rag_ci.core.comparison.history import HISTORY_FILE
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
ARTIFACT, DATA_BRANCH = "artifact", "data branch"
COPIES_TRIED = 5  # copies vetted (one commit list and one run read each) before giving up


@dataclass(frozen=True)
class FoundBaseline:
    """The baseline and where it came from: the commit, branch, run and source the comment names."""

    result: RunResult
    sha: str | None  # the commit the baseline run evaluated
    branch: str
    run_id: int | None
    source: str = ARTIFACT  # ARTIFACT or DATA_BRANCH
    made_at: datetime | None = None  # when the artifact was uploaded, or the copy stored

    def described(self, now: datetime | None = None) -> str:
        """'main, artifact, 3 days old': the words the comment puts after the baseline's commit."""
        words = [self.branch, self.source]
        if self.made_at is not None:
            made = self.made_at if self.made_at.tzinfo else self.made_at.replace(tzinfo=UTC)
            days = max(((now or datetime.now(UTC)) - made).days, 0)
            words.append("today" if days == 0 else f"{days} day{'s' if days != 1 else ''} old")
        return ", ".join(words)


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
    prefer: Callable[[], str | None]
    if plan.base_branch is BaseBranch.PULL_REQUEST_BASE:
        if s.pr_number is None or not s.pr_base_ref:
            raise RagCiError("mode pr needs a pull_request event (no pull_request in the event payload)")
        branch = s.pr_base_ref

        def prefer() -> str | None:  # the run at the commit the pull request branched from
            return github.merge_base(branch, s.pr_head_sha) if s.pr_head_sha else None
    elif plan.base_branch is BaseBranch.MERGE_QUEUE_BASE:
        if not s.pr_base_ref or not s.pr_base_sha:
            raise RagCiError(
                "the merge-queue mode needs a merge_group event (no merge_group.base_ref/base_sha in the payload)"
            )
        branch = s.pr_base_ref

        def prefer() -> str | None:  # the queue builds on this commit of the base branch
            return s.pr_base_sha
    else:
        branch = s.default_branch or s.branch or "main"

        def prefer() -> str | None:  # the run at the previous tip of the pushed branch
            return s.push_before_sha

    finder = BaselineFinder(settings, github, runner, branch)
    if plan.baseline is BaselineUse.CACHE:
        return finder.as_cache(prefer)
    return finder.find(prefer, history_lines)


class BaselineFinder:
    """The artifact or the data branch's copy, as the module docstring orders them."""

    def __init__(self, settings: Settings, github: GitHubRepo, runner: Runner, branch: str):
        self.settings, self.github, self.runner, self.branch = settings, github, runner, branch
        self.trace: list[str] = []  # what shows that a baseline existed once

    def find(
        self, prefer: Callable[[], str | None], history_lines: Callable[[str], int] | None
    ) -> FoundBaseline | None:
        """The baseline; None only when none ever existed (bootstrap). A baseline that exists but
        cannot be read, or that was lost, raises: passing as "bootstrap" would let a PR through ungated.
        Without `history_lines` (a verdict cache only) no trace is looked for: None."""
        name = self.settings.baseline_artifact
        wanted: list[str | None] = []

        def at_commit() -> str | None:  # asked once, and only when an artifact or a copy is there
            if not wanted:
                wanted.append(prefer())
            return wanted[0]

        artifact = self.github.find_baseline(name, self.branch, at_commit)
        if artifact is not None and (not wanted or wanted[0] is None or artifact.head_sha == wanted[0]):
            return self.from_artifact(artifact)
        copy = self.usable_copy(at_commit, only_at_commit=artifact is not None)
        if copy is not None:
            return copy
        if artifact is not None:
            return self.from_artifact(artifact)
        self.runner.info(
            f"[rag-ci] no baseline artifact '{name}' from a successful run on {self.branch}, no copy on {self.settings.data_branch}"
        )
        if history_lines is None:
            return None
        self.trace.extend(past_baselines(self.settings, self.github, self.branch, history_lines))
        if not self.trace:
            return None
        raise RagCiError(lost_message(self.settings, self.branch, self.trace))

    def as_cache(self, prefer: Callable[[], str | None]) -> FoundBaseline | None:
        """On main the previous baseline only saves judge calls: without it the run is
        slower, not wrong, so a problem getting it is a warning."""
        try:
            return self.find(prefer, None)
        except GitHubError as exc:
            self.runner.warning(f"previous baseline not used as verdict cache: {exc}")
        except RagCiError as exc:
            self.runner.info(f"[rag-ci] previous baseline not used as verdict cache: {exc}")
        return None

    def from_artifact(self, artifact: ArtifactRef) -> FoundBaseline:
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
            baseline = _load(path, where)
        return FoundBaseline(
            baseline,
            artifact.head_sha or baseline.meta.git_sha,
            self.branch,
            artifact.run_id,
            ARTIFACT,
            artifact.created_at,
        )

    def usable_copy(
        self, at_commit: Callable[[], str | None], *, only_at_commit: bool
    ) -> FoundBaseline | None:
        """The data branch's copy at the wanted commit (else, unless `only_at_commit`, the newest)
        that `copy_problem` finds nothing wrong with."""
        data_branch = self.settings.data_branch
        try:
            copies = self.github.list_baseline_copies(data_branch)
        except GitHubError as exc:
            raise lookup_failed(f"listing the baseline copies on `{data_branch}`", exc) from None
        if not copies:
            return None
        commit = at_commit()
        # The copy at the wanted commit first; unless only it would do, then the others, newest first.
        chosen = [c for c in copies if c.commit == commit] + (
            [] if only_at_commit else [c for c in copies if c.commit != commit]
        )
        now = datetime.now(UTC)
        for copy in chosen[:COPIES_TRIED]:
            if self.copy_problem(copy, now) is None:
                return self.from_copy(copy)
        return None

    def copy_problem(self, copy: BaselineCopy, now: datetime) -> str | None:
        """None for a copy a baseline run of this branch wrote (its name's date checked against its
        commit's); else why not. A copy another branch's run wrote is not this branch's: skipped
        without a warning or a trace."""
        data_branch = self.settings.data_branch
        try:
            problem = self.github.baseline_copy_problem(data_branch, copy, now)
            if problem is None and copy.run_id is None:
                problem = "its name records no workflow run (written by hand, or by a rag-ci before 1.1)"
            if problem is None:
                facts = self.github.workflow_run(copy.run_id or 0)
                if (
                    facts is not None
                    and facts.head_branch != self.branch
                    and facts.problem(self.github.repository) is None
                ):
                    self.runner.info(
                        f"[rag-ci] {copy.path} is {facts.head_branch}'s baseline, not {self.branch}'s"
                    )
                    return "another branch's"
                problem = (
                    f"run {copy.run_id} does not exist"
                    if facts is None
                    else facts.problem(self.github.repository, branch=self.branch, sha=copy.commit)
                )
        except GitHubError as exc:
            raise lookup_failed(f"checking who wrote {copy.path} on `{data_branch}`", exc) from None
        if problem is not None:
            self.runner.warning(
                f"{copy.path} on {data_branch} is not used as the baseline: {problem}. A copy counts only "
                f"when a successful push, dispatch or schedule run of {self.branch} at its commit wrote it "
                '(docs/action.md, "Who can plant a baseline")',
                title="rag-ci: baseline copy",
            )
            self.trace.append(
                f"`{copy.path}` on `{data_branch}` is not a baseline rag-ci can trust ({problem})"
            )
        return problem

    def from_copy(self, copy: BaselineCopy) -> FoundBaseline:
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
                f"on {self.branch}.\n{ACTIONS_REBASELINE_HINT}"
            )
        return FoundBaseline(baseline, copy.commit, self.branch, copy.run_id, DATA_BRANCH, copy.stored_at)


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
