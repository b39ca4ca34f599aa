"""The data branch (`rag-ci-data`): an orphan branch holding the append-only history.

Written through the contents API, so the action needs no git checkout or push rights
beyond `contents: write`. The branch is created on first use as an orphan commit (it
shares no history with the code, and checking it out shows only the data).

Anyone who can push may push to the data branch too, so what a line *says* proves nothing
about who wrote it. `lines_written_by` tells which lines came from the action itself: the
newest commit that added the line must be attributed to the action's account and carry a
signature GitHub verified. GitHub signs the commits a bot makes through the API; a pushed
commit claiming the bot's e-mail is not verified (docs/noise.md).
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Collection

from github import GithubException, InputGitTreeElement
from github.Repository import Repository

CONFLICT_RETRIES = 3  # two main runs appending at once: re-read and try again

DATA_BRANCH_README = """\
# rag-ci data

This branch is written by the rag-ci GitHub Action; it shares no history with the code.

- `eval_history.jsonl`: one JSON line per evaluation of the default branch (pass rate,
  metric means, latency, cost, question-set version, judge). `rag-ci history eval_history.jsonl`
  prints the trend.
- `baselines/<time>-<commit>.json.gz`: the default branch's last baselines (results.json,
  gzipped), which pull requests compare with once the baseline artifact has expired.
"""


@dataclasses.dataclass(frozen=True)
class DataFile:
    text: str
    sha: str


def read_file(repo: Repository, branch: str, path: str) -> DataFile:
    """The file's text and blob sha (calls: GET contents; GET blob when over 1 MB).

    Raises GithubException 404 when the branch or the file does not exist."""
    content = repo.get_contents(path, ref=branch)
    if isinstance(content, list):
        raise GithubException(422, {"message": f"{path} on {branch} is a directory"}, None)
    if content.encoding == "base64" and content.content is not None:
        return DataFile(content.decoded_content.decode("utf-8"), content.sha)
    # Over 1 MB the contents API leaves `content` empty; the blob API serves up to 100 MB.
    blob = repo.get_git_blob(content.sha)
    return DataFile(base64.b64decode(blob.content).decode("utf-8"), content.sha)


def append_line(repo: Repository, branch: str, path: str, line: str, *, message: str) -> None:
    """Append one line to `path` on `branch`, creating the file or the branch if needed.

    Calls, usually: GET contents + PUT contents. First run: GET contents (404), GET branch
    (404), POST tree, POST commit, POST ref.
    """
    line = line.rstrip("\n") + "\n"
    for attempt in range(CONFLICT_RETRIES):
        try:
            existing = read_file(repo, branch, path)
        except GithubException as exc:
            if exc.status != 404:
                raise
            existing = None
        try:
            if existing is not None:
                text = (
                    existing.text
                    if existing.text.endswith("\n") or not existing.text
                    else existing.text + "\n"
                )
                repo.update_file(path, message, text + line, existing.sha, branch=branch)
            elif _branch_exists(repo, branch):
                repo.create_file(path, message, line, branch=branch)
            else:
                _create_orphan_branch(repo, branch, {path: line, "README.md": DATA_BRANCH_README}, message)
            return
        except GithubException as exc:
            # 409: the file changed since we read it; 422: created meanwhile ("sha" missing).
            if exc.status in (409, 422) and attempt < CONFLICT_RETRIES - 1:
                continue
            raise


def _branch_exists(repo: Repository, branch: str) -> bool:
    try:
        repo.get_branch(branch)
    except GithubException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _create_orphan_branch(repo: Repository, branch: str, files: dict[str, str], message: str) -> None:
    tree = repo.create_git_tree(
        [InputGitTreeElement(name, "100644", "blob", content=text) for name, text in sorted(files.items())]
    )
    commit = repo.create_git_commit(message, tree, [])
    repo.create_git_ref(f"refs/heads/{branch}", commit.sha)


def lines_written_by(
    repo: Repository,
    branch: str,
    path: str,
    lines: set[str],
    login: str | Collection[str],
    *,
    max_commits: int = 40,
) -> set[str]:
    """Those of `lines` (of `path` on `branch`) that a verified commit of `login` (or one of those logins) added.

    Walks the file's commits newest first (GET commits?path=, then GET each commit for its
    patch) until every line is attributed, or `max_commits` were read: the newest commit
    that adds a line decides, so a later copy of a genuine line makes it untrusted too.
    A line not found in those commits is not trusted."""
    pending, trusted = set(lines), set()
    for index, commit in enumerate(repo.get_commits(sha=branch, path=path)):
        if not pending or index >= max_commits:
            break
        added = {
            line[1:]
            for f in commit.files
            if f.filename == path
            for line in (f.patch or "").splitlines()
            if line.startswith("+") and not line.startswith("+++")
        }
        found = pending & added
        if found and _made_by(commit, login):
            trusted |= found
        pending -= found
    return trusted


def _made_by(commit, login: str | Collection[str]) -> bool:
    logins = {login} if isinstance(login, str) else set(login)
    author = commit.author.login if commit.author is not None else None
    verification = commit.commit.verification  # PyGithub's GitCommitVerification (a dict in older versions)
    verified = (
        verification.get("verified")
        if isinstance(verification, dict)
        else getattr(verification, "verified", None)
    )
    return author in logins and verified is True
