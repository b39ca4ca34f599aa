"""Actions artifacts: finding the baseline from main, and reading one file out of a zip.

Which artifact is the baseline (docs/action.md): the newest one with the configured name that
a *successful* run on the PR's base branch uploaded, preferring the run whose head sha is
the merge-base of the PR, i.e. exactly the code the PR branched from.

Artifacts can be uploaded by any workflow run, including a pull request from a fork whose
branch happens to be called `main`. So a candidate counts only when its run belongs to
this repository (not a fork), ran on a trusted event (push, dispatch, schedule) and
concluded with success.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path, PurePosixPath

import httpx
from github import GithubException
from github.Artifact import Artifact
from github.Repository import Repository

from rag_ci import __version__
from rag_ci.safety.secret import Secret

TRUSTED_EVENTS = frozenset({"push", "workflow_dispatch", "schedule"})
MAX_CANDIDATES = 100  # one page of the artifacts list
MAX_LISTED = 300  # artifacts of the name read, expired ones included (3 pages)
MAX_RUN_CHECKS = 5  # runs fetched to find a successful one before giving up
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024  # a results.json is megabytes; refuse zip bombs
USER_AGENT = f"rag-ci/{__version__}"


@dataclasses.dataclass(frozen=True)
class ArtifactRef:
    id: int
    name: str
    run_id: int | None
    head_sha: str | None
    head_branch: str | None
    created_at: datetime | None
    size_in_bytes: int
    archive_download_url: str
    expired: bool = False
    of_this_repository: bool = True  # False: uploaded by a run on a fork's branch

    @classmethod
    def of(cls, artifact: Artifact) -> ArtifactRef:
        # Typed attributes, not raw_data: on a lazy connection raw_data would fetch the
        # artifact again, while the list already carries every field used here.
        run = artifact.workflow_run
        return cls(
            id=artifact.id,
            name=artifact.name,
            run_id=run.id if run else None,
            head_sha=run.head_sha if run else None,
            head_branch=run.head_branch if run else None,
            created_at=artifact.created_at,
            size_in_bytes=artifact.size_in_bytes or 0,
            archive_download_url=artifact.archive_download_url,
            expired=bool(artifact.expired),
            of_this_repository=run is not None and run.head_repository_id == run.repository_id,
        )


def list_named(repo: Repository, name: str) -> list[ArtifactRef]:
    """Every artifact called `name`, expired or not, up to MAX_LISTED (calls: GET artifacts?name=,
    one request per 100). Listed once per run: the baseline and the traces of one come from it."""
    listed: list[ArtifactRef] = []
    for artifact in repo.get_artifacts(name=name):
        if len(listed) >= MAX_LISTED:
            break
        listed.append(ArtifactRef.of(artifact))
    return listed


def find_baseline(
    repo: Repository,
    full_name: str,
    listed: list[ArtifactRef],
    *,
    branch: str,
    prefer_sha: Callable[[], str | None],
) -> ArtifactRef | None:
    """The baseline artifact among `listed`, or None when none is usable.

    Calls: GET compare (only when there are candidates), GET the run of each candidate tried (usually one).
    """
    candidates = [a for a in listed if not a.expired and a.head_branch == branch and a.of_this_repository][
        :MAX_CANDIDATES
    ]
    if not candidates:
        return None
    candidates.sort(key=lambda a: a.created_at or datetime.min, reverse=True)
    merge_base = prefer_sha()
    if merge_base:
        # Stable sort: the merge-base artifacts first, each group newest first.
        candidates.sort(key=lambda a: a.head_sha != merge_base)
    for candidate in candidates[:MAX_RUN_CHECKS]:
        facts = run_facts(repo, candidate.run_id) if candidate.run_id is not None else None
        if facts is not None and facts.problem(full_name) is None:
            return candidate
    return None


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """A workflow run as the Actions API reports it (GET actions/runs/{id})."""

    id: int
    event: str | None
    conclusion: str | None
    head_branch: str | None
    head_sha: str | None
    head_repository: str | None

    def problem(self, full_name: str, *, branch: str | None = None, sha: str | None = None) -> str | None:
        """None when a baseline is trusted from this run: a successful push, dispatch or schedule run
        of `full_name` (on `branch` at `sha`, when given); else what the run is instead."""
        if self.head_repository != full_name:
            return f"run {self.id} ran on {self.head_repository or 'another repository'}"
        if self.event not in TRUSTED_EVENTS:
            return f"run {self.id} was a `{self.event}` run, not a push, dispatch or schedule"
        if self.conclusion != "success":
            return f"run {self.id} did not succeed ({self.conclusion or 'unfinished'})"
        if branch is not None and self.head_branch != branch:
            return f"run {self.id} ran on {self.head_branch}, not {branch}"
        if sha is not None and self.head_sha != sha:
            return f"run {self.id} evaluated {(self.head_sha or 'unknown')[:12]}, not {sha[:12]}"
        return None


def run_facts(repo: Repository, run_id: int) -> RunFacts | None:
    """The run, None when GitHub has no such run (calls: GET actions/runs/{id})."""
    run = repo.get_workflow_run(run_id)  # lazy; the first attribute read is one GET
    try:
        head_repo = run.head_repository.full_name if run.head_repository else None
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise
    return RunFacts(run_id, run.event, run.conclusion, run.head_branch, run.head_sha, head_repo)


def newest_expired(listed: list[ArtifactRef], *, branch: str) -> ArtifactRef | None:
    """The newest expired artifact among `listed` that a run of this repository on `branch`
    uploaded: the trace of a baseline that existed (no call: the first listing is reused)."""
    expired = [a for a in listed if a.expired and a.head_branch == branch and a.of_this_repository]
    return max(expired, key=lambda a: a.created_at or datetime.min, default=None)


def find_in_run(repo: Repository, run_id: int, name: str) -> ArtifactRef | None:
    """The artifact called `name` that run `run_id` uploaded (calls: GET artifacts?name=)."""
    for artifact in repo.get_artifacts(name=name):
        run = artifact.workflow_run
        if run is not None and run.id == run_id and not artifact.expired:
            return ArtifactRef.of(artifact)
    return None


def download_file(
    artifact: ArtifactRef, token: Secret, filename: str, dest: Path, *, timeout: float = 60.0
) -> Path | None:
    """Download the artifact's zip and write its member `filename` to `dest`.

    Calls: GET artifacts/{id}/zip, which answers 302 to short-lived blob storage (on
    github.com an Azure host that PyGithub refuses to follow to), then the blob URL. The
    token goes to the API only: the blob URL is signed and gets no Authorization header.
    Returns None when the zip has no such file.
    """
    if artifact.size_in_bytes > MAX_ARTIFACT_BYTES:
        raise ValueError(
            f"artifact {artifact.name} is {artifact.size_in_bytes} bytes, over the {MAX_ARTIFACT_BYTES} limit"
        )
    headers = {
        "Authorization": f"Bearer {token.reveal()}",
        "Accept": "application/vnd.github+json",
        "User-Agent": USER_AGENT,
    }
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        response = client.get(artifact.archive_download_url, headers=headers)
        if response.status_code in (301, 302, 303, 307, 308):
            location = response.headers["location"]
            response = _get_capped(client, location, {"User-Agent": USER_AGENT}, artifact.name)
        elif response.status_code == 200:
            response = _get_capped(client, artifact.archive_download_url, headers, artifact.name)
        if response.status_code != 200:
            raise GithubException(response.status_code, _json_or_text(response), dict(response.headers))
        data = response.content
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        member = _find_member(archive, filename)
        if member is None:
            return None
        if member.file_size > MAX_ARTIFACT_BYTES:
            raise ValueError(f"{member.filename} in artifact {artifact.name} is too large to read")
        dest.parent.mkdir(parents=True, exist_ok=True)
        # Only this one member is read, into a path we chose: no extraction, no zip-slip.
        dest.write_bytes(archive.read(member))
    return dest


def _get_capped(client: httpx.Client, url: str, headers: dict[str, str], name: str) -> httpx.Response:
    """GET `url`, refusing to read more than MAX_ARTIFACT_BYTES."""
    with client.stream("GET", url, headers=headers) as response:
        if response.status_code != 200:
            response.read()
            return response
        buffer = io.BytesIO()
        for chunk in response.iter_bytes(1 << 16):
            buffer.write(chunk)
            if buffer.tell() > MAX_ARTIFACT_BYTES:
                raise ValueError(f"artifact {name} is over the {MAX_ARTIFACT_BYTES}-byte limit")
    return httpx.Response(200, content=buffer.getvalue(), headers=response.headers)


def _json_or_text(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return {"message": response.text[:300]}


def _find_member(archive: zipfile.ZipFile, filename: str) -> zipfile.ZipInfo | None:
    """The member named `filename` nearest the root (upload-artifact keeps sub-folders)."""
    matches = [i for i in archive.infolist() if not i.is_dir() and PurePosixPath(i.filename).name == filename]
    return min(matches, key=lambda i: (len(PurePosixPath(i.filename).parts), i.filename), default=None)
