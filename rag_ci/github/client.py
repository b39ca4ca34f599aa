"""The one REST client of the action: a PyGithub connection to one repository.

`GitHubRepo` is what the action talks to. Its methods delegate to small modules
(comments, artifacts, databranch, pulls), each about one kind of REST resource; this
file only builds the connection and turns PyGithub's exceptions into ours.

The base URL is `GITHUB_API_URL`, so GitHub Enterprise Server works the same as
github.com. The connection is lazy: PyGithub objects are built from URLs and fetched
only when an attribute is read, which keeps the number of calls per run small.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import github
import httpx
from github import Auth, Github, GithubException, GithubRetry

from rag_ci import __version__
from rag_ci.github import artifacts, baseline_copies, checks, comments, databranch, pulls
from rag_ci.github.identity import GITHUB_ACTIONS_LOGIN, Identity, token_identity
from rag_ci.safety.secret import Secret

T = TypeVar("T")


class GitHubError(Exception):
    """A REST call failed; the message says which and what to do about it."""


class CannotWrite(GitHubError):
    """The token may not write here (a fork PR's read-only token, or missing `permissions:`)."""


def connect(
    api_url: str,
    token: Secret,
    repository: str,
    *,
    seconds_between_requests: float = 0.25,
    retries: int = 5,
    comment_author: str | None = None,
) -> GitHubRepo:
    """A client for `repository` at `api_url`. Requests are spaced out as GitHub asks
    integrations to (PyGithub's defaults); tests against a fake turn that off. `comment_author`
    names the token's login when the workflow knows it (rag_ci.github.identity)."""
    gh = Github(
        auth=Auth.Token(token.reveal()) if token else None,
        base_url=api_url,
        user_agent=f"rag-ci/{__version__}",
        per_page=100,  # fewer pages for comments and artifacts lists
        timeout=30,
        lazy=True,
        # Retry 5xx and rate limits, but never wait for an hour-long primary rate-limit reset.
        retry=GithubRetry(total=retries, backoff_factor=1.0, max_rate_limit_wait=120),
        seconds_between_requests=seconds_between_requests,
        seconds_between_writes=4 * seconds_between_requests,
    )
    # PyGithub logs every expected 403 (GET /user with the Actions token) at INFO.
    logging.getLogger("github").setLevel(logging.WARNING)
    return GitHubRepo(gh, repository, token, comment_author=comment_author)


class GitHubRepo:
    def __init__(self, gh: Github, repository: str, token: Secret, *, comment_author: str | None = None):
        self.gh = gh
        self.repository = repository
        self._token = token  # for the artifact download, which PyGithub cannot follow
        self.repo = gh.get_repo(repository)  # lazy: no request
        self._named = comment_author or None
        self._identity: Identity | None = None
        self._listed: dict[str, list[artifacts.ArtifactRef]] = {}

    # --- comments ------------------------------------------------------------------
    def identity(self) -> Identity:
        """Who the token acts as (asked at most once per connection)."""
        if self._identity is None:
            self._identity = _call(
                "read the token's user", lambda: token_identity(self.gh, named=self._named)
            )
        return self._identity

    def login(self) -> str:
        """The token's login (an installation token's, not known: the job token's, github-actions[bot])."""
        return self.identity().login

    def upsert_comment(self, pr_number: int, body: str, marker: str, *, create: bool = True) -> str:
        """Create or edit the one comment that `marker` opens; returns its URL. When the token's
        account cannot be read, the comment is posted anyway (a new one, whose author is the account):
        an old verdict must never stay standing because GET /user failed (rag_ci.github.comments).
        `create` False: only an existing comment is edited; "" when there is none."""
        try:
            me: Identity | None = self.identity()
        except GitHubError:
            me = None
        writers = me.writers() if me is not None else frozenset({GITHUB_ACTIONS_LOGIN})
        return _call(
            f"post the comment on pull request #{pr_number}",
            lambda: comments.upsert_sticky_comment(
                self.repo, pr_number, body, marker=marker, me=me, writers=writers, create=create
            ),
            write=True,
        )

    # --- check run -----------------------------------------------------------------
    def publish_check_run(
        self,
        *,
        head_sha: str,
        conclusion: str,
        title: str,
        summary: str,
        annotations: list[dict],
        details_url: str | None = None,
    ) -> str:
        """The `rag-ci gate` check run with every annotation (rag_ci.github.checks); CannotWrite
        when the token lacks `checks: write`."""
        return _call(
            f"create the '{checks.CHECK_RUN_NAME}' check run (needs `permissions: checks: write`)",
            lambda: checks.publish_check_run(
                self.repo,
                head_sha=head_sha,
                conclusion=conclusion,
                title=title,
                summary=summary,
                annotations=annotations,
                details_url=details_url,
            ),
            write=True,
        )

    # --- baseline artifact ---------------------------------------------------------
    def baseline_artifacts(self, name: str) -> list[artifacts.ArtifactRef]:
        """The artifacts called `name`, expired ones too, listed once per connection: the baseline
        and the trace of an expired one are read from the same listing."""
        if name not in self._listed:
            self._listed[name] = _call(
                f"list the artifacts named '{name}' (needs `permissions: actions: read`)",
                lambda: artifacts.list_named(self.repo, name),
            )
        return self._listed[name]

    def find_baseline(
        self, name: str, branch: str, prefer_sha: Callable[[], str | None]
    ) -> artifacts.ArtifactRef | None:
        listed = self.baseline_artifacts(name)
        return _call(
            f"look for the baseline artifact '{name}' (needs `permissions: actions: read`)",
            lambda: artifacts.find_baseline(
                self.repo, self.repository, listed, branch=branch, prefer_sha=prefer_sha
            ),
        )

    def download_file(self, artifact: artifacts.ArtifactRef, filename: str, dest: Path) -> Path | None:
        return _call(
            f"download artifact {artifact.name} #{artifact.id}",
            lambda: artifacts.download_file(artifact, self._token, filename, dest),
        )

    def expired_baseline(self, name: str, branch: str) -> artifacts.ArtifactRef | None:
        """The newest baseline artifact of this repository on `branch` that has expired."""
        return artifacts.newest_expired(self.baseline_artifacts(name), branch=branch)

    def workflow_run(self, run_id: int) -> artifacts.RunFacts | None:
        """The workflow run `run_id` (None: no such run). Any other failure raises: a run that could
        not be read is never taken for one that does not exist."""
        return _call(
            f"read workflow run {run_id} (needs `permissions: actions: read`)",
            lambda: artifacts.run_facts(self.repo, run_id),
        )

    def run_artifact(self, run_id: int, name: str) -> artifacts.ArtifactRef | None:
        return _call(
            f"list the artifacts of run {run_id}",
            lambda: artifacts.find_in_run(self.repo, run_id, name),
        )

    # --- pull requests -------------------------------------------------------------
    def merge_base(self, base: str, head: str) -> str | None:
        return _call(
            f"compare {base}...{head}", lambda: pulls.merge_base(self.repo, base, head), missing_ok=True
        )

    def open_pr_for_head(self, owner: str, branch: str, head_sha: str | None) -> int | None:
        return _call(
            f"find the pull request of {owner}:{branch}",
            lambda: pulls.open_pr_for_head(self.repo, owner, branch, head_sha),
        )

    # --- files at a commit ----------------------------------------------------------
    def file_at(self, ref: str, path: str) -> str | None:
        """A file's text at a branch or commit (None: no such file there)."""
        result = _call(
            f"read {path} at {ref}", lambda: databranch.read_file(self.repo, ref, path), missing_ok=True
        )
        return result.text if result else None

    # --- data branch ---------------------------------------------------------------
    def read_data_file(self, branch: str, path: str) -> str | None:
        result = _call(
            f"read {path} on branch {branch}",
            lambda: databranch.read_file(self.repo, branch, path),
            missing_ok=True,
        )
        return result.text if result else None

    def lines_written_by_us(self, branch: str, path: str, lines: set[str]) -> set[str]:
        """Those of `lines` of `path` that the action's accounts wrote (Identity.writers), in verified commits."""
        me = self.identity().writers()
        return _call(
            f"read the commits of {path} on branch {branch}",
            lambda: databranch.lines_written_by(self.repo, branch, path, lines, me),
        )

    def list_baseline_copies(self, branch: str) -> list[baseline_copies.BaselineCopy]:
        return _call(
            f"list the baseline copies on branch {branch}",
            lambda: baseline_copies.list_copies(self.repo, branch),
        )

    def baseline_copy_problem(
        self, branch: str, copy: baseline_copies.BaselineCopy, now: datetime
    ) -> str | None:
        """None when the copy's newest commit is a verified commit of the action's account, made when
        the copy's name says; else why it does not count (the run that wrote it is checked apart)."""
        writers = self.identity().writers()
        if copy.stored_at > now + baseline_copies.CLOCK_SKEW:  # no call needed to refuse a date to come
            return baseline_copies.commit_problem(None, copy, writers, now)
        commit = _call(
            f"read the commits of {copy.path} on branch {branch}",
            lambda: baseline_copies.newest_commit(self.repo, branch, copy),
        )
        return baseline_copies.commit_problem(commit, copy, writers, now)

    def read_baseline_copy(self, branch: str, copy: baseline_copies.BaselineCopy) -> bytes:
        return _call(
            f"read {copy.path} on branch {branch}", lambda: baseline_copies.read_copy(self.repo, branch, copy)
        )

    def store_baseline_copy(
        self,
        branch: str,
        commit: str,
        results_json: bytes,
        when: datetime,
        keep: int,
        run_id: int,
        made_by: str = "",
    ) -> baseline_copies.BaselineCopy:
        return _call(
            f"store the baseline on branch {branch} (needs `permissions: contents: write`)",
            lambda: baseline_copies.store_copy(
                self.repo, branch, commit, results_json, when=when, run_id=run_id, made_by=made_by, keep=keep
            ),
            write=True,
        )

    def append_data_line(self, branch: str, path: str, line: str, message: str) -> None:
        _call(
            f"append to {path} on branch {branch} (needs `permissions: contents: write`)",
            lambda: databranch.append_line(self.repo, branch, path, line, message=message),
            write=True,
        )


def _call(what: str, fn: Callable[[], T], *, write: bool = False, missing_ok: bool = False) -> T:
    """Run one adapter operation, turning PyGithub/requests errors into GitHubError
    with a message that names the operation (never the token)."""
    try:
        return fn()
    except GithubException as exc:
        message = _message(exc)
        if missing_ok and exc.status == 404:
            return None  # type: ignore[return-value]
        if write and exc.status in (403, 404):
            raise CannotWrite(f"could not {what}: HTTP {exc.status} {message}") from None
        raise GitHubError(f"could not {what}: HTTP {exc.status} {message}") from None
    except (OSError, httpx.HTTPError, github.BadAttributeException) as exc:  # requests' errors are OSErrors
        raise GitHubError(f"could not {what}: {type(exc).__name__}: {exc}") from None
    except (ValueError, zipfile.BadZipFile) as exc:  # an artifact too large or not a zip
        raise GitHubError(f"could not {what}: {exc}") from None


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or "").strip()[:300]
