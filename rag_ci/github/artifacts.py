"""Actions artifacts: finding the baseline from main, and reading one file out of a zip.

Which artifact is the baseline (docs/action.md, rag_ci.action.nearest_baseline): the one with
the configured name whose commit is the nearest ancestor of the PR's merge base, uploaded by a
*successful* run of a baseline workflow on the base branch (or the default branch).

Artifacts can be uploaded by any workflow run, including a pull request from a fork whose
branch happens to be called `main`, or a run on a tag named `main`. So a candidate counts only
when its run belongs to this repository (not a fork), ran a baseline workflow on a trusted event
(push, dispatch, schedule) and concluded with success (`RunFacts.problem`), and its commit is an
ancestor of the commit compared (so on the branch, whatever name the run reported).
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Collection
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


def usable(listed: list[ArtifactRef], branches: Collection[str]) -> list[ArtifactRef]:
    """The artifacts among `listed` that may be a baseline of one of `branches`, newest first: not
    expired, uploaded by a run of this repository on that branch (its run is vetted apart, RunFacts)."""
    found = [a for a in listed if not a.expired and a.head_branch in branches and a.of_this_repository]
    return sorted(found, key=lambda a: a.created_at or datetime.min, reverse=True)[:MAX_CANDIDATES]


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """A workflow run as the Actions API reports it (GET actions/runs/{id})."""

    id: int
    event: str | None
    conclusion: str | None
    head_branch: str | None
    head_sha: str | None
    head_repository: str | None
    path: str | None = None  # the workflow file the run ran, `.github/workflows/x.yml`

    @property
    def workflow(self) -> str:
        # GitHub may add the ref a workflow was read at (`x.yml@refs/heads/main`): the file is what counts.
        return (self.path or "").split("@", 1)[0]

    def problem(
        self,
        full_name: str,
        *,
        branch: str | None = None,
        sha: str | None = None,
        workflows: Collection[str] | None = None,
    ) -> str | None:
        """None when a baseline is trusted from this run: a successful push, dispatch or schedule run
        of `full_name` (of one of `workflows`, on `branch` at `sha`, when given); else what the run is instead."""
        if self.head_repository != full_name:
            return f"run {self.id} ran on {self.head_repository or 'another repository'}"
        if self.event not in TRUSTED_EVENTS:
            return f"run {self.id} was a `{self.event}` run, not a push, dispatch or schedule"
        if self.conclusion != "success":
            return f"run {self.id} did not succeed ({self.conclusion or 'unfinished'})"
        if workflows is not None and self.workflow not in workflows:
            return (
                f"run {self.id} ran `{self.workflow or 'an unknown workflow'}`, not a baseline workflow "
                f"({', '.join(f'`{w}`' for w in sorted(workflows))}: the `baseline-workflows` input)"
            )
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
    return RunFacts(run_id, run.event, run.conclusion, run.head_branch, run.head_sha, head_repo, run.path)


def successful_runs(
    repo: Repository, full_name: str, workflow: str, branches: Collection[str]
) -> list[RunFacts]:
    """The trusted runs of `workflow` (a path, `.github/workflows/x.yml`) that succeeded on one of
    `branches`, newest first, from one page (calls: GET actions/workflows/{file}/runs?status=success).
    A workflow file GitHub does not know raises 404."""
    found: list[RunFacts] = []
    runs = repo.get_workflow(PurePosixPath(workflow).name).get_runs(status="success")
    for index, run in enumerate(runs):
        head_repo = run.head_repository.full_name if run.head_repository else None
        facts = RunFacts(
            run.id, run.event, run.conclusion, run.head_branch, run.head_sha, head_repo, run.path
        )
        if facts.head_branch in branches and facts.problem(full_name) is None:
            found.append(facts)
        if index + 1 >= MAX_CANDIDATES:  # one page
            break
    return found


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
