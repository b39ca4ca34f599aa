"""The baseline as the action finds it: the `rag-ci-baseline` artifact of a successful run on
the base branch, and, when it cannot be used, how a repository using the action replaces it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag_ci.action.modes import BaseBranch, BaselineUse, Plan
from rag_ci.action.outputs import RESULTS_FILE
from rag_ci.gate import REBASELINE_HINT
from rag_ci.core.scoring.results import RunResult
from rag_ci.errors import RagCiError
from rag_ci.github.client import GitHubError, GitHubRepo
from rag_ci.github.workflow import Runner
from rag_ci.action.settings import Settings
from rag_ci.files.results_file import keep_until_exit, load_results

# What the core's neutral REBASELINE_HINT means for a repository using the action.
ACTIONS_REBASELINE_HINT = (
    "Re-baseline: run the rag-ci workflow on the base branch with `workflow_dispatch` and "
    "`rebaseline: true` (or run `rag-ci run` on main and replace the baseline artifact)."
)


@dataclass(frozen=True)
class FoundBaseline:
    """The baseline and where it came from: the commit, branch and run the comment names."""

    result: RunResult
    sha: str | None  # the commit the baseline run evaluated
    branch: str
    run_id: int | None


def in_actions_words(message: str) -> str:
    """A core message with its re-baseline hint told the action's way."""
    return message.replace(REBASELINE_HINT, ACTIONS_REBASELINE_HINT)


def find_baseline(plan: Plan, settings: Settings, github: GitHubRepo, runner: Runner) -> FoundBaseline | None:
    """The baseline the plan asks for: compared with, only a verdict cache, or none."""
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
    else:
        branch = s.default_branch or s.branch or "main"

        def prefer() -> str | None:  # the run at the previous tip of the pushed branch
            return s.push_before_sha
    if plan.baseline is BaselineUse.CACHE:
        return cache_baseline(settings, github, runner, branch, prefer)
    return fetch_baseline(settings, github, runner, branch, prefer)


def fetch_baseline(settings: Settings, github: GitHubRepo, runner: Runner, branch: str,
                   prefer: Callable[[], str | None]) -> FoundBaseline | None:
    """The baseline, or None when there is none yet (bootstrap).

    An artifact that exists but cannot be read (no results.json in it, corrupt JSON,
    another schema) raises: passing as "bootstrap" would let a PR through ungated."""
    name = settings.baseline_artifact
    artifact = github.find_baseline(name, branch, prefer)
    if artifact is None:
        runner.info(f"[rag-ci] no baseline artifact '{name}' from a successful run on {branch}")
        return None
    runner.info(f"[rag-ci] baseline: artifact #{artifact.id} from run {artifact.run_id} at {(artifact.head_sha or '?')[:12]}")
    where = f"the `{name}` artifact #{artifact.id} (run {artifact.run_id})"
    with tempfile.TemporaryDirectory(prefix="rag-ci-baseline-") as tmp:
        path = github.download_file(artifact, RESULTS_FILE, Path(tmp) / RESULTS_FILE)
        if path is None:
            raise RagCiError(f"The baseline is unusable: {where} holds no {RESULTS_FILE}.\n{ACTIONS_REBASELINE_HINT}")
        try:
            baseline = keep_until_exit(load_results(path, what="baseline"))
        except RagCiError as exc:  # another schema version, or a damaged file
            raise RagCiError(f"The baseline is unusable: {where}: {exc}\n{ACTIONS_REBASELINE_HINT}") from None
    if baseline.meta.broken:  # uploaded by hand, or by an older rag-ci: never compare with it
        raise RagCiError(f"The baseline is unusable: {where} is a broken run, not a result: {baseline.meta.broken}\n{ACTIONS_REBASELINE_HINT}")
    return FoundBaseline(baseline, artifact.head_sha or baseline.meta.git_sha, branch, artifact.run_id)


def cache_baseline(settings: Settings, github: GitHubRepo, runner: Runner, branch: str,
                   prefer: Callable[[], str | None]) -> FoundBaseline | None:
    """On main the previous baseline only saves judge calls: without it the run is
    slower, not wrong, so a problem getting it is a warning."""
    try:
        return fetch_baseline(settings, github, runner, branch, prefer)
    except GitHubError as exc:
        runner.warning(f"previous baseline not used as verdict cache: {exc}")
    except RagCiError as exc:
        runner.info(f"[rag-ci] previous baseline not used as verdict cache: {exc}")
    return None
