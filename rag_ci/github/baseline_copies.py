"""Copies of main's baseline on the data branch: the baseline outlives its artifact.

Actions artifacts expire (90 days by default, often 1-30 days by an organisation's policy)
and can be deleted; a quiet main, or a baseline job that failed, would then leave pull
requests without a baseline. So every baseline run also stores its results.json, gzipped
(the verdict cache is inside), on the data branch as

    baselines/<UTC time>-<commit sha>-<workflow run id>.json.gz

keeping the newest `KEPT_COPIES` (older ones are deleted: the branch stays small).

Who can write there: anyone who can push, and any workflow of the repository that runs with
`contents: write`, which commits as the action's own account, verified (a collaborator's
workflow on a pushed branch does exactly that). So a copy counts only when (`vet_copy`):
the newest commit that touched it is a verified commit of the action's account; its name
records the workflow run that wrote it, and that run, read from the Actions API by id, is a
successful push / dispatch / schedule run of this repository on the base branch at the
copy's commit (the rule a baseline artifact follows, rag_ci.github.artifacts); and the time
in its name is that commit's time (a copy named for 2099 is not "the newest").
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import re
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from github import GithubException
from github.Repository import Repository

from rag_ci.github.databranch import (
    CONFLICT_RETRIES,
    DATA_BRANCH_README,
    _branch_exists,
    _create_orphan_branch,
)

COPIES_DIR = "baselines"
KEPT_COPIES = 20
MAX_COPY_BYTES = 256 * 1024 * 1024  # uncompressed: refuse gzip bombs
_NAME = re.compile(r"(\d{8}T\d{6}Z)-([0-9a-f]{7,40})(?:-(\d{1,20}))?\.json\.gz")
_TIME = "%Y%m%dT%H%M%SZ"
CLOCK_SKEW = timedelta(hours=1)  # a copy's name may differ from its commit's time by this much


@dataclasses.dataclass(frozen=True)
class BaselineCopy:
    path: str
    commit: str  # the commit of the default branch the baseline run evaluated
    stored_at: datetime  # as its name says: checked against its commit's date before it is believed
    blob_sha: str
    run_id: int | None = None  # the workflow run that wrote it (None: an older copy, or not rag-ci's)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def copy_path(commit: str, when: datetime, run_id: int) -> str:
    return f"{COPIES_DIR}/{when.astimezone(UTC).strftime(_TIME)}-{commit}-{run_id}.json.gz"


def list_copies(repo: Repository, branch: str) -> list[BaselineCopy]:
    """The copies on `branch`, newest first (calls: GET contents of the folder; 404: none)."""
    try:
        entries = repo.get_contents(COPIES_DIR, ref=branch)
    except GithubException as exc:
        if exc.status == 404:
            return []
        raise
    copies = []
    for entry in entries if isinstance(entries, list) else [entries]:
        match = _NAME.fullmatch(entry.name)
        if match is None:
            continue  # not ours: ignored
        stored = datetime.strptime(match[1], _TIME).replace(tzinfo=UTC)
        copies.append(
            BaselineCopy(
                f"{COPIES_DIR}/{entry.name}", match[2], stored, entry.sha, int(match[3]) if match[3] else None
            )
        )
    return sorted(copies, key=lambda c: c.name, reverse=True)


@dataclasses.dataclass(frozen=True)
class CopyCommit:
    """The newest commit of the data branch that touched a copy."""

    sha: str
    author: str | None
    verified: bool
    date: datetime | None


def newest_commit(repo: Repository, branch: str, copy: BaselineCopy) -> CopyCommit | None:
    """The newest commit that touched the copy, None when none did (calls: GET commits?path=, one page)."""
    return next(iter(commits_touching(repo, branch, copy.path, limit=1)), None)


def commits_touching(repo: Repository, branch: str, path: str, *, limit: int = 100) -> list[CopyCommit]:
    """The commits of `branch` that touched `path` (a file, or anything in a folder), newest first
    (calls: GET commits?sha=&path=, one page)."""
    found: list[CopyCommit] = []
    for commit in repo.get_commits(sha=branch, path=path):
        verification = commit.commit.verification
        verified = (
            verification.get("verified")
            if isinstance(verification, dict)
            else getattr(verification, "verified", None)
        )
        date = commit.commit.committer.date if commit.commit.committer is not None else None
        if date is not None and date.tzinfo is None:
            date = date.replace(tzinfo=UTC)
        found.append(
            CopyCommit(
                commit.sha, commit.author.login if commit.author is not None else None, verified is True, date
            )
        )
        if len(found) >= limit:  # before the next item, which may be the next page's call
            break
    return found


def commit_problem(
    commit: CopyCommit | None, copy: BaselineCopy, writers: Collection[str], now: datetime
) -> str | None:
    """Why the copy's newest commit does not vouch for it (None: it does): not a verified commit of
    `writers`, or made at another time than the copy's name says."""
    if copy.stored_at > now + CLOCK_SKEW:
        return f"its name dates it {copy.stored_at:%Y-%m-%d %H:%M}, a time that has not come"
    if commit is None:
        return "no commit of the data branch added it"
    if commit.author not in writers or not commit.verified:
        return (
            f"the newest commit that changed it ({commit.sha[:12]}) is {'by ' + commit.author if commit.author else 'by no known account'}"
            + ("" if commit.verified else ", unverified")
        )
    if commit.date is None or abs(commit.date - copy.stored_at) > CLOCK_SKEW:
        when = f"{commit.date:%Y-%m-%d %H:%M}" if commit.date else "an unknown time"
        return f"its name dates it {copy.stored_at:%Y-%m-%d %H:%M}, but the commit that wrote it ({commit.sha[:12]}) is of {when}"
    return None


def read_copy(repo: Repository, branch: str, copy: BaselineCopy) -> bytes:
    """The copy's results.json, uncompressed (calls: GET contents; GET blob when over 1 MB).
    Raises ValueError for a copy that is not gzip or too large."""
    content = repo.get_contents(copy.path, ref=branch)
    if isinstance(content, list):
        raise ValueError(f"{copy.path} on {branch} is a directory")
    if content.encoding == "base64" and content.content:
        data = content.decoded_content
    else:  # over 1 MB the contents API leaves `content` empty; the blob API serves up to 100 MB
        data = base64.b64decode(repo.get_git_blob(content.sha).content)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
            text = unzipped.read(MAX_COPY_BYTES + 1)
    except (OSError, EOFError) as exc:
        raise ValueError(f"{copy.path} is not a gzip file: {exc}") from None
    if len(text) > MAX_COPY_BYTES:
        raise ValueError(f"{copy.path} is over {MAX_COPY_BYTES} bytes uncompressed")
    return text


def store_copy(
    repo: Repository,
    branch: str,
    commit: str,
    results_json: bytes,
    *,
    when: datetime,
    run_id: int,
    made_by: str = "",
    keep: int = KEPT_COPIES,
) -> BaselineCopy:
    """Store `results_json` (gzipped) as the copy of `commit` made by workflow run `run_id` (`made_by`:
    its event and branch, for the commit message; the run itself is what a reader checks), then
    delete the oldest beyond `keep` and the earlier copies of the same commit (a re-run replaces them).

    Calls: GET contents of the folder, PUT contents, DELETE contents per copy dropped; the
    first time, the branch is created (GET branch, POST tree, POST commit, POST ref)."""
    data = gzip.compress(results_json, compresslevel=6, mtime=0)
    path = copy_path(commit, when, run_id)
    message = f"rag-ci: baseline of {commit[:12]} (workflow run {run_id}{', ' + made_by if made_by else ''})"
    for attempt in range(CONFLICT_RETRIES):  # baseline runs of close pushes write at the same time
        existing = list_copies(repo, branch) if _branch_exists(repo, branch) else None
        try:
            if existing is None:
                _create_orphan_branch(
                    repo, branch, {"README.md": DATA_BRANCH_README}, f"rag-ci: create {branch}"
                )
                existing = []
            previous = next((c for c in existing if c.path == path), None)
            if previous is not None:
                repo.update_file(path, message, data, previous.blob_sha, branch=branch)
            else:
                repo.create_file(path, message, data, branch=branch)
            break
        except GithubException as exc:
            if exc.status in (409, 422) and attempt < CONFLICT_RETRIES - 1:
                continue
            raise
    existing = existing or []  # created empty above when the branch was new
    older_same = [c for c in existing if c.commit == commit and c.path != path]
    others = [c for c in existing if c.commit != commit and c.path != path]
    for dropped in [*older_same, *others[max(keep - 1, 0) :]]:
        try:
            repo.delete_file(
                dropped.path,
                f"rag-ci: drop the baseline copy of {dropped.commit[:12]}",
                dropped.blob_sha,
                branch=branch,
            )
        except GithubException as exc:
            if exc.status not in (404, 409, 422):  # dropped by another run meanwhile: the next run tidies up
                raise
    return BaselineCopy(path, commit, when, "", run_id)
