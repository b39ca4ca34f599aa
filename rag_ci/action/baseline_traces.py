"""Whether a baseline ever existed on a branch: what tells a lost baseline from a first run.

rag_ci.action.baseline looks for the baseline itself (the artifact, the data branch's copies).
When it finds none, the traces here decide (docs/action.md, "Which baseline"): none at all is a
bootstrap (`bootstrap_notice`), the first pull request passes; an expired artifact, the history's
lines of the branch or a copy rag-ci cannot trust mean the baseline was lost (`lost_message`,
exit 2 with the run that makes a new one). Every lookup that decides "no trace" fails closed
(`lookup_failed`): a GitHub call that failed is exit 2 naming the call, never "nothing found".
"""

from __future__ import annotations

from collections.abc import Callable

from rag_ci.action.settings import Settings
from rag_ci.core.comparison.history import HISTORY_FILE, lines_of_branch
from rag_ci.errors import RagCiError
from rag_ci.github.baseline_copies import KEPT_COPIES
from rag_ci.github.client import GitHubError, GitHubRepo

LOOKUP_FIX = (
    'Not treated as "no baseline yet": that would pass the pull request ungated. Fix: re-run this check '
    "(a passing GitHub outage); if it fails again, give the workflow `permissions: actions: read` and "
    "`contents: read` (and check that the data branch exists and is readable)."
)


OUTAGE_FIX = (
    'Not treated as "no baseline yet": that would pass the pull request ungated. Fix: re-run the job.'
)


def lookup_failed(what: str, exc: GitHubError) -> RagCiError:
    """The error of a lookup that decides whether a baseline ever existed: exit 2, never bootstrap.
    GitHub failing on its side (5xx on every retry) is told as such: re-run, nothing to configure."""
    if exc.outage:
        return RagCiError(
            f"Could not tell whether a baseline exists: {what} failed: GitHub answered {exc.status} on every "
            f"retry: re-run the job.\n{OUTAGE_FIX}"
        )
    return RagCiError(f"Could not tell whether a baseline exists: {what} failed ({exc}).\n{LOOKUP_FIX}")


def past_baselines(
    settings: Settings, github: GitHubRepo, branch: str, history_lines: Callable[[str], int]
) -> list[str]:
    """What shows a baseline existed on this branch: an expired artifact, its lines in the history.
    A failed lookup raises (lookup_failed): "no trace" must be known, never assumed."""
    s = settings
    trace: list[str] = []
    try:
        expired = github.expired_baseline(s.baseline_artifact, branch)
    except GitHubError as exc:
        raise lookup_failed(
            f"listing the `{s.baseline_artifact}` artifacts (expired ones included)", exc
        ) from None
    if expired is not None:
        uploaded = f" uploaded {expired.created_at:%Y-%m-%d}" if expired.created_at else ""
        trace.append(
            f"the last `{s.baseline_artifact}` artifact (#{expired.id}, commit "
            f"{(expired.head_sha or 'unknown')[:12]},{uploaded}) has expired"
        )
    lines = history_lines(branch)
    if lines:
        trace.append(
            f"`{HISTORY_FILE}` on `{s.data_branch}` has {lines} line{'s' if lines != 1 else ''} of "
            f"{branch}: it was evaluated before"
        )
    return trace


def baseline_runs(settings: Settings, github: GitHubRepo, branches: tuple[str, ...]) -> list[str]:
    """A successful run of a baseline workflow on these branches: it made a baseline, whatever was
    deleted since (artifacts, the data branch). Asked only when nothing else shows one."""
    for workflow in settings.baseline_workflows:
        try:
            runs = github.baseline_runs(workflow, branches)
        except GitHubError as exc:
            raise lookup_failed(f"listing the successful runs of `{workflow}`", exc) from None
        if runs:
            run = runs[0]
            return [
                f"run {run.id} of `{workflow}` ({run.event} on {run.head_branch}, commit {(run.head_sha or '?')[:12]}) "
                "succeeded and made a baseline, and none of it is left (its artifact and copies deleted)"
            ]
    return []


def data_branch_wipes(settings: Settings, github: GitHubRepo) -> list[str]:
    """What the data branch's own history shows when its copies and history lines are gone: the
    commits that wrote them are still listed, and the one that removed them is named (the newest
    commit not rag-ci's own: not a verified commit of the action's account). A data branch whose
    history was rewritten or deleted shows nothing here; the artifacts and the Actions API still may."""
    s = settings
    try:
        commits = github.data_commits(s.data_branch, ("baselines", HISTORY_FILE))
        writers = github.identity().writers() if commits else frozenset()
    except GitHubError as exc:
        raise lookup_failed(f"reading the history of the `{s.data_branch}` branch", exc) from None
    if not commits:
        return []
    foreign = next((c for c in commits if c.author not in writers or not c.verified), None)
    by = (
        f"; the newest commit that is not rag-ci's own is {foreign.sha[:12]} ({foreign.author or 'no known account'}"
        f"{'' if foreign.verified else ', unverified'}): it removed them, or let them be removed"
        if foreign is not None
        else ""
    )
    return [
        f"the `{s.data_branch}` branch's history has {len(commits)} commit{'s' if len(commits) != 1 else ''} "
        f"that wrote baseline copies or `{HISTORY_FILE}`, and neither is left{by}"
    ]


def lost_message(settings: Settings, branch: str, trace: list[str], refused: list[str] | None = None) -> str:
    """Why the check fails when `branch` had a baseline (`trace`: what shows it) and none is left;
    `refused`: the candidates rag-ci would not trust, each with why (said first: they are the cause)."""
    s = settings
    if refused:
        others = [t for t in trace if t not in refused]
        cause = (
            f"The baseline of {branch} was refused: not compared, and not passed as a first-run bootstrap. "
            f'Refused: {"; ".join(refused)} (docs/action.md, "Who can plant a baseline").'
            + (f" Besides: {'; '.join(others)}." if others else "")
        )
    else:
        cause = (
            f"The baseline of {branch} is gone: not compared, and not passed as a first-run bootstrap, because "
            f"{branch} had one ({'; '.join(trace)}). No `{s.baseline_artifact}` artifact from a successful baseline "
            f"run on {branch} is left (expired, deleted, or its baseline runs failed) and no copy of it on the "
            f"`{s.data_branch}` branch (rag-ci keeps the last {KEPT_COPIES} there; deleted, or written before rag-ci kept them)."
        )
    return (
        f"{cause}\n"
        f"Fix: make a new baseline of {branch}, then re-run this check. With a re-evaluation workflow that takes "
        "`workflow_dispatch` and `rebaseline: true` (rag-ci's `rag-ci-full.yml`): `gh workflow run <that workflow> "
        f"--ref {branch} -f rebaseline=true`; with only the README's two workflows: re-run the newest run of the "
        f"baseline workflow on {branch} (Actions → that run → Re-run all jobs), or push to {branch}. "
        "Either makes a new baseline (artifact and data-branch copy)."
    )


def bootstrap_notice(settings: Settings) -> str:
    """What a bootstrap says: which branch has no baseline yet, and what makes its first one."""
    s = settings
    base = s.pr_base_ref or s.default_branch or "main"  # the branch whose baseline this run is compared with
    default = s.default_branch or "main"
    first = (
        "the next run on the default branch creates the baseline."
        if base == default
        else f"a push to `{base}` makes its baseline (`rag-ci init`'s baseline workflow runs on `release/**`), or "
        f"`gh workflow run rag-ci-full.yml --ref {base} -f rebaseline=true`."
    )
    where = f"`{base}`" if base == default else f"`{base}` nor on `{default}`, where it was cut from"
    return (
        f"bootstrap on `{base}`: no baseline on any ancestor of this pull request on {where} (no "
        f"`{s.baseline_artifact}` artifact from a successful baseline run, expired or not, no copy and no history "
        f"on `{s.data_branch}`). This run passes; {first}"
    )


def history_lines_of(settings: Settings, github: GitHubRepo, branch: str) -> int:
    """The history's lines of `branch` (rag_ci.core.comparison.history.lines_of_branch): whether a
    baseline existed there. The history not read, after the client's retries, is exit 2 (fails closed)."""
    s = settings
    try:
        text = github.read_data_file(s.data_branch, HISTORY_FILE)
    except GitHubError as exc:
        raise lookup_failed(f"reading `{HISTORY_FILE}` on `{s.data_branch}`", exc) from None
    return lines_of_branch(text or "", branch, default_branch=s.default_branch or "main")
