"""FakeGitHubServer: a fake of the GitHub REST API, for tests only.

A real HTTP server (ThreadingHTTPServer on 127.0.0.1, random port) that implements just
the endpoints the action calls through PyGithub, with GitHub's shapes: Link-header
pagination, 302 to "blob storage" for artifact zips, 403 "Resource not accessible by
integration" for a read-only token, 409 for a stale contents sha, the Checks API's rules
for check runs (50 annotations per request, appended by each PATCH). Every request is
recorded (method, path, query, whether it carried the token), so tests can count calls
and check what was sent where. The token value itself is never recorded.

Blob storage is served by the same server under the host name `localhost`, while the API
is `127.0.0.1`: a different host, so the test can check that the client does not send
the token to it.
"""

from __future__ import annotations

import base64
import dataclasses
import difflib
import hashlib
import io
import itertools
import json
import re
import threading
import zipfile
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from fakes.fake_git_graph import CommitGraph

FORBIDDEN = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest",
    "status": "403",
}
NOW = "2025-01-01T00:00:00Z"


@dataclasses.dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    host: str
    authorized: bool  # carried the expected token
    had_authorization: bool  # carried any Authorization header
    body: Any
    status: int = 0

    @property
    def route(self) -> str:
        """`METHOD path` with numbers and shas replaced, for counting calls by kind."""
        path = re.sub(r"/[0-9a-f]{40}", "/{sha}", self.path)
        path = re.sub(r"/\d+", "/{n}", path)
        path = re.sub(r"/compare/[^/]+", "/compare/{basehead}", path)
        path = re.sub(r"/contents/.+", "/contents/{path}", path)
        path = re.sub(r"/branches/.+", "/branches/{branch}", path)
        return f"{self.method} {path}"


@dataclasses.dataclass
class FakeArtifact:
    id: int
    name: str
    run_id: int
    head_branch: str
    head_sha: str
    zip_bytes: bytes
    created_at: str = NOW
    expired: bool = False
    from_fork: bool = False
    expires_at: str = "2099-01-01T00:00:00Z"


@dataclasses.dataclass
class FakeRun:
    id: int
    head_branch: str
    head_sha: str
    event: str = "push"
    conclusion: str | None = "success"
    head_full_name: str | None = None  # None: the repository itself
    # The workflow file the run ran (GitHub's `path` of a run): init's baseline workflow by default.
    path: str = ".github/workflows/rag-ci-baseline.yml"


@dataclasses.dataclass
class FakeCommit:
    """A commit that changed one file on a branch: who made it, and whether GitHub verified its signature."""

    sha: str
    branch: str
    path: str
    before: bytes
    after: bytes
    login: str | None  # the GitHub account the commit is attributed to (None: no account matches)
    verified: bool  # GitHub signs the commits a bot makes through the API; a pushed commit is unsigned
    message: str = "update"
    # When it was made: the real clock, as GitHub dates a commit made through the API (a pushed
    # commit's date is whatever its author's machine said: `push_commit(..., date=...)`).
    date: str = dataclasses.field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))

    def patch(self) -> str:
        lines = difflib.unified_diff(
            self.before.decode(errors="replace").splitlines(),
            self.after.decode(errors="replace").splitlines(),
            lineterm="",
            n=3,
        )
        return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def zip_of(files: dict[str, bytes | str]) -> bytes:
    """A zip like the one actions/upload-artifact produces."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def git_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeGitHubServer:
    """One repository's worth of GitHub. Use as a context manager; `url` is the API base."""

    def __init__(
        self,
        *,
        repository: str = "acme/rag",
        token: str = "fake-token",
        bot_login: str = "github-actions[bot]",
    ):
        self.repository = repository
        self.token = token
        self.bot_login = bot_login  # who the token posts as
        self.user_endpoint_forbidden = True  # GITHUB_TOKEN cannot read GET /user
        self.read_only = False  # a fork PR's token: every write is 403
        self.comment_only_token = False  # a token that may comment but not edit others' comments
        self.contents_inline_limit = 1_000_000  # over this, contents come without `content`
        self.repo_id = 1000
        self.requests: list[RecordedRequest] = []
        self.comments: dict[int, list[dict[str, Any]]] = {}  # issue number -> comments
        self.artifacts: list[FakeArtifact] = []
        self.runs: dict[int, FakeRun] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.merge_bases: dict[str, str] = {}  # head sha -> merge-base sha
        self.graph = CommitGraph()  # the code's commits: ancestry for `commits?sha=` and compare
        self.graph.line("a" * 40, branch="main")  # main's first commit, where add_baseline_artifact's run is
        self.branches: dict[str, dict[str, bytes]] = {"main": {"README.md": b"# acme/rag\n"}}
        self.blobs: dict[str, bytes] = {}
        self._trees: dict[str, dict[str, bytes]] = {}
        self._commits: dict[str, str] = {}  # commit sha -> tree sha
        self.file_commits: list[FakeCommit] = []  # oldest first: every change of a file on a branch
        self._injected: list[tuple[str, str, int, dict[str, Any]]] = []
        # Checks API (the `rag-ci gate` check run): id -> the check run as created, annotations appended.
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.checks_forbidden = False  # a token without `checks: write`: POST check-runs is 403
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def blob_url(self) -> str:
        return f"http://localhost:{self.port}"

    def __enter__(self) -> FakeGitHubServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="FakeGitHubServer",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- arranging state -----------------------------------------------------------
    def add_baseline_artifact(
        self,
        files: dict[str, bytes | str],
        *,
        name: str = "rag-ci-baseline",
        branch: str = "main",
        head_sha: str = "a" * 40,
        created_at: str | None = None,  # None: now (the comment says how old its baseline is)
        event: str = "push",
        conclusion: str | None = "success",
        from_fork: bool = False,
    ) -> FakeArtifact:
        run_id = next(self._ids) + 5000
        self.runs[run_id] = FakeRun(
            run_id,
            branch,
            head_sha,
            event=event,
            conclusion=conclusion,
            head_full_name="evil/rag" if from_fork else None,
        )
        created_at = created_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        artifact = FakeArtifact(
            next(self._ids) + 9000,
            name,
            run_id,
            branch,
            head_sha,
            zip_of(files),
            created_at,
            from_fork=from_fork,
        )
        self.artifacts.append(artifact)
        return artifact

    def add_pull(
        self, number: int, *, head_owner: str, head_branch: str, head_sha: str, base: str = "main"
    ) -> None:
        self.pulls[number] = {
            "number": number,
            "state": "open",
            "head_owner": head_owner,
            "head_branch": head_branch,
            "head_sha": head_sha,
            "base": base,
        }

    def add_comment(self, issue: int, body: str, *, login: str) -> dict[str, Any]:
        with self._lock:
            return self._new_comment(issue, body, login)

    def inject(
        self,
        method: str,
        path_prefix: str,
        status: int,
        message: str = "injected",
        times: int = 1,
        *,
        skip: int = 0,
    ) -> None:
        """Answer the next `times` matching requests with `status` (after recording them), once the
        first `skip` matching requests have been answered as usual."""
        for _ in range(skip):
            self._injected.append((method, path_prefix, 0, {}))  # status 0: let this one through
        for _ in range(times):
            self._injected.append((method, path_prefix, status, {"message": message}))

    def add_files_at(self, ref: str, files: dict[str, bytes | str]) -> None:
        """Files the contents API serves at `ref` (a branch name, or a commit sha such as a PR's base)."""
        self.branches.setdefault(ref, {}).update(
            {p: d.encode() if isinstance(d, str) else d for p, d in files.items()}
        )

    def push_commit(
        self,
        branch: str,
        path: str,
        text: str | bytes,
        *,
        login: str | None,
        verified: bool = False,
        message: str = "update",
        date: str | None = None,
    ) -> FakeCommit:
        """A commit someone pushed (or the action made, `login` its bot and `verified`): `path` becomes `text`."""
        with self._lock:
            commit = self._record_commit(
                branch, path, text.encode() if isinstance(text, str) else text, login, verified, message
            )
            if date is not None:
                commit.date = date
            return commit

    def push_removal(
        self, branch: str, path: str, *, login: str | None, verified: bool = False
    ) -> FakeCommit:
        """A commit someone pushed that deletes `path` (listed by `commits?path=` like any other)."""
        with self._lock:
            commit = self._record_commit(branch, path, b"", login, verified, f"remove {path}")
            self.branches[branch].pop(path, None)
            return commit

    def _record_commit(
        self, branch: str, path: str, data: bytes, login: str | None, verified: bool, message: str
    ) -> FakeCommit:
        files = self.branches.setdefault(branch, {})
        sha = hashlib.sha1(data + str(next(self._ids)).encode()).hexdigest()
        commit = FakeCommit(sha, branch, path, files.get(path, b""), data, login, verified, message)
        files[path] = data
        self.file_commits.append(commit)
        return commit

    def file_on_branch(self, branch: str, path: str) -> bytes | None:
        return self.branches.get(branch, {}).get(path)

    # --- reading the log -----------------------------------------------------------
    def api_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if not r.path.startswith("/_blobs/")]

    def routes(self) -> list[str]:
        return [r.route for r in self.api_requests()]

    # --- JSON shapes ---------------------------------------------------------------
    def _api(self, path: str) -> str:
        return f"{self.url}/repos/{self.repository}{path}"

    def _repo_json(self, full_name: str | None = None) -> dict[str, Any]:
        full_name = full_name or self.repository
        owner, name = full_name.split("/")
        repo_id = self.repo_id if full_name == self.repository else self.repo_id + 1
        return {
            "id": repo_id,
            "name": name,
            "full_name": full_name,
            "owner": {"login": owner, "id": 1, "type": "Organization"},
            "default_branch": "main",
            "url": f"{self.url}/repos/{full_name}",
            "html_url": f"https://github.com/{full_name}",
        }

    def _new_comment(self, issue: int, body: str, login: str) -> dict[str, Any]:
        comment_id = next(self._ids) + 100_000
        comment = {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "body": body,
            "user": {"login": login, "id": 41898282, "type": "Bot" if login.endswith("[bot]") else "User"},
            "url": self._api(f"/issues/comments/{comment_id}"),
            "html_url": f"https://github.com/{self.repository}/pull/{issue}#issuecomment-{comment_id}",
            "issue_url": self._api(f"/issues/{issue}"),
            "created_at": NOW,
            "updated_at": NOW,
        }
        self.comments.setdefault(issue, []).append(comment)
        return comment

    def _artifact_json(self, a: FakeArtifact) -> dict[str, Any]:
        head_repo_id = self.repo_id + 1 if a.from_fork else self.repo_id
        return {
            "id": a.id,
            "node_id": f"MDg6QXJ0aWZhY3Q{a.id}",
            "name": a.name,
            "size_in_bytes": len(a.zip_bytes),
            "url": self._api(f"/actions/artifacts/{a.id}"),
            "archive_download_url": self._api(f"/actions/artifacts/{a.id}/zip"),
            "expired": a.expired,
            "created_at": a.created_at,
            "updated_at": a.created_at,
            "expires_at": a.expires_at,
            "workflow_run": {
                "id": a.run_id,
                "repository_id": self.repo_id,
                "head_repository_id": head_repo_id,
                "head_branch": a.head_branch,
                "head_sha": a.head_sha,
            },
        }

    def _run_json(self, r: FakeRun) -> dict[str, Any]:
        return {
            "id": r.id,
            "name": "rag-ci baseline",
            "head_branch": r.head_branch,
            "head_sha": r.head_sha,
            "event": r.event,
            "status": "completed" if r.conclusion else "in_progress",
            "conclusion": r.conclusion,
            "path": r.path,
            "workflow_id": 161335 + sum(map(ord, r.path)),
            "url": self._api(f"/actions/runs/{r.id}"),
            "html_url": f"https://github.com/{self.repository}/actions/runs/{r.id}",
            "artifacts_url": self._api(f"/actions/runs/{r.id}/artifacts"),
            "repository": self._repo_json(),
            "head_repository": self._repo_json(r.head_full_name),
        }

    def _pull_json(self, p: dict[str, Any]) -> dict[str, Any]:
        head_repo = f"{p['head_owner']}/{self.repository.split('/')[1]}"
        return {
            "number": p["number"],
            "state": p["state"],
            "url": self._api(f"/pulls/{p['number']}"),
            "head": {
                "ref": p["head_branch"],
                "sha": p["head_sha"],
                "label": f"{p['head_owner']}:{p['head_branch']}",
                "repo": self._repo_json(head_repo),
            },
            "base": {
                "ref": p["base"],
                "sha": "b" * 40,
                "label": f"{self.repository.split('/')[0]}:{p['base']}",
                "repo": self._repo_json(),
            },
        }

    def _commit_json(self, c: FakeCommit, *, files: bool) -> dict[str, Any]:
        person = {
            "name": c.login or "someone",
            "email": f"{c.login or 'someone'}@users.noreply.github.com",
            "date": c.date,
        }
        account = (
            {"login": c.login, "id": 41898282, "type": "Bot" if (c.login or "").endswith("[bot]") else "User"}
            if c.login
            else None
        )
        data: dict[str, Any] = {
            "sha": c.sha,
            "node_id": f"C_{c.sha[:8]}",
            "url": self._api(f"/commits/{c.sha}"),
            "html_url": f"https://github.com/{self.repository}/commit/{c.sha}",
            "commit": {
                "author": person,
                "committer": person,
                "message": c.message,
                "url": self._api(f"/git/commits/{c.sha}"),
                "tree": {"sha": "f" * 40, "url": self._api("/git/trees/" + "f" * 40)},
                "verification": {
                    "verified": c.verified,
                    "reason": "valid" if c.verified else "unsigned",
                    "signature": None,
                    "payload": None,
                },
            },
            "author": account,
            "committer": {"login": "web-flow", "id": 19864447, "type": "User"} if c.verified else account,
            "parents": [],
        }
        if files:
            data["files"] = [
                {
                    "filename": c.path,
                    "status": "removed" if c.before and not c.after else "modified" if c.before else "added",
                    "patch": c.patch(),
                    "additions": c.patch().count("\n+") + c.patch().startswith("+"),
                    "deletions": 0,
                    "changes": 1,
                    "sha": git_sha(c.after),
                }
            ]
        return data

    def _content_json(self, branch: str, path: str, data: bytes) -> dict[str, Any]:
        sha = git_sha(data)
        self.blobs[sha] = data
        inline = len(data) <= self.contents_inline_limit
        return {
            "type": "file",
            "encoding": "base64" if inline else "none",
            "size": len(data),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": base64.encodebytes(data).decode() if inline else "",
            "sha": sha,
            "url": self._api(f"/contents/{quote(path)}?ref={branch}"),
            "html_url": f"https://github.com/{self.repository}/blob/{branch}/{path}",
            "git_url": self._api(f"/git/blobs/{sha}"),
            "download_url": None,
        }

    def _graph_commit_json(self, sha: str) -> dict[str, Any]:
        """A commit of the code's history (CommitGraph), as `GET commits` lists it."""
        person = {"name": "dev", "email": "dev@example.com", "date": NOW}
        return {
            "sha": sha,
            "node_id": f"C_{sha[:8]}",
            "url": self._api(f"/commits/{sha}"),
            "html_url": f"https://github.com/{self.repository}/commit/{sha}",
            "commit": {
                "author": person,
                "committer": person,
                "message": "a commit",
                "url": self._api(f"/git/commits/{sha}"),
                "tree": {"sha": "f" * 40, "url": self._api("/git/trees/" + "f" * 40)},
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
            },
            "author": None,
            "committer": None,
            "parents": [
                {"sha": p, "url": self._api(f"/commits/{p}")} for p in self.graph.parents.get(sha, [])
            ],
        }

    WORKFLOW_FILES = ("rag-ci-baseline.yml", "rag-ci-full.yml", "rag-ci-pr.yml", "rag-ci-comment.yml")

    def _workflow_runs(
        self, path: str, workflow: str, query: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        """`GET actions/workflows/{file}/runs`: the runs of that workflow file, newest first, filtered
        by `status` (a conclusion such as `success`), `branch` and `event`; 404 for a file the
        repository has no workflow of."""
        known = set(self.WORKFLOW_FILES) | {r.path.rsplit("/", 1)[-1] for r in self.runs.values()}
        if workflow not in known:
            return 404, {"message": "Not Found"}, {}
        found = [
            self._run_json(r)
            for r in sorted(self.runs.values(), key=lambda r: r.id, reverse=True)
            if r.path.rsplit("/", 1)[-1] == workflow
            and query.get("status") in (None, r.conclusion, "completed" if r.conclusion else "in_progress")
            and query.get("branch") in (None, r.head_branch)
            and query.get("event") in (None, r.event)
        ]
        return self._paginated(path, query, found, list_key="workflow_runs")

    def _compare(self, sub: str, base: str, head: str) -> tuple[int, Any, dict[str, str]]:
        """`GET compare/{base}...{head}`: from `merge_bases` (head -> its merge base) when a test set
        one, else counted on the commit graph; 404 when neither knows the commits."""
        if head in self.merge_bases:
            counted = {"status": "ahead", "ahead_by": 1, "behind_by": 0, "total_commits": 1}
            merge_base = self.merge_bases[head]
        else:
            found = self.graph.compare(base, head)
            if found is None:
                return 404, {"message": "Not Found"}, {}
            merge_base = found.pop("merge_base")
            counted = found
        commit = {
            "sha": merge_base,
            "url": self._api(f"/commits/{merge_base}"),
            "commit": {"message": "base"},
        }
        return (
            200,
            {
                "url": self._api(sub),
                **counted,
                "base_commit": commit,
                "merge_base_commit": commit,
                "commits": [],
                "files": [],
            },
            {},
        )

    # --- routing -------------------------------------------------------------------
    def _handle(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        if path.startswith("/_blobs/"):
            artifact = next((a for a in self.artifacts if a.id == int(path.split("/")[2])), None)
            if artifact is None or query.get("sig") != "fake-signature":
                return 403, b"AuthenticationFailed", {}
            return 200, artifact.zip_bytes, {"Content-Type": "application/zip"}
        if (year := self._year_routes(method, path, query, body)) is not None:
            return year
        if path == "/user":
            if self.user_endpoint_forbidden:
                return 403, FORBIDDEN, {}
            return 200, {"login": self.bot_login, "id": 7, "type": "User"}, {}

        prefix = f"/repos/{self.repository}"
        if path == prefix:
            return 200, self._repo_json(), {}
        if not path.startswith(prefix + "/"):
            return 404, {"message": "Not Found"}, {}
        sub = path[len(prefix) :]
        if method != "GET" and self.read_only:
            return 403, FORBIDDEN, {}

        if sub == "/check-runs" or sub.startswith("/check-runs/"):
            return self._checks(method, sub, body)
        if m := re.fullmatch(r"/issues/(\d+)/comments", sub):
            issue = int(m[1])
            if method == "GET":
                return self._paginated(path, query, list(self.comments.get(issue, [])))
            if method == "POST":
                return 201, self._new_comment(issue, body["body"], self.bot_login), {}
        if m := re.fullmatch(r"/issues/comments/(\d+)", sub):
            comment = next((c for cs in self.comments.values() for c in cs if c["id"] == int(m[1])), None)
            if comment is None:
                return 404, {"message": "Not Found"}, {}
            if method == "PATCH":
                # GitHub lets anyone with write access edit any comment of the repository (docs:
                # "Managing disruptive comments"); a token that may only comment may not.
                if comment["user"]["login"] != self.bot_login and self.comment_only_token:
                    return 403, {"message": "You cannot edit someone else's comment"}, {}
                comment["body"] = body["body"]
                comment["updated_at"] = "2025-01-02T00:00:00Z"
            return 200, comment, {}
        if sub == "/actions/artifacts" and method == "GET":
            found = [a for a in reversed(self.artifacts) if "name" not in query or a.name == query["name"]]
            return self._paginated(path, query, [self._artifact_json(a) for a in found], list_key="artifacts")
        if m := re.fullmatch(r"/actions/artifacts/(\d+)/zip", sub):
            artifact = next((a for a in self.artifacts if a.id == int(m[1])), None)
            if artifact is None or artifact.expired:
                return (
                    410 if artifact else 404,
                    {"message": "Artifact has expired" if artifact else "Not Found"},
                    {},
                )
            return 302, b"", {"Location": f"{self.blob_url}/_blobs/{artifact.id}?sig=fake-signature"}
        if m := re.fullmatch(r"/actions/workflows/([^/]+)/runs", sub):
            return self._workflow_runs(path, unquote(m[1]), query)
        if m := re.fullmatch(r"/actions/runs/(\d+)", sub):
            run = self.runs.get(int(m[1]))
            return (200, self._run_json(run), {}) if run else (404, {"message": "Not Found"}, {})
        if m := re.fullmatch(r"/actions/runs/(\d+)/artifacts", sub):
            found = [self._artifact_json(a) for a in reversed(self.artifacts) if a.run_id == int(m[1])]
            return self._paginated(path, query, found, list_key="artifacts")
        if m := re.fullmatch(r"/compare/(.+)\.\.\.(.+)", sub):
            return self._compare(sub, unquote(m[1]), unquote(m[2]))
        if sub == "/pulls" and method == "GET":
            found = [
                self._pull_json(p)
                for p in self.pulls.values()
                if p["state"] == query.get("state", "open")
                and ("head" not in query or query["head"] == f"{p['head_owner']}:{p['head_branch']}")
            ]
            return self._paginated(path, query, found)
        if m := re.fullmatch(r"/pulls/(\d+)", sub):
            pull = self.pulls.get(int(m[1]))
            return (200, self._pull_json(pull), {}) if pull else (404, {"message": "Not Found"}, {})
        if m := re.fullmatch(r"/contents/(.+)", sub):
            return self._contents(method, unquote(m[1]), query, body)
        if sub == "/commits" and method == "GET":
            ref = query.get("sha", "main")
            if self.graph.knows(ref) and "path" not in query:
                return self._paginated(
                    path, query, [self._graph_commit_json(c) for c in self.graph.history(ref)]
                )
            if ref not in self.branches:
                return 404, {"message": f"No commit found for SHA: {ref}"}, {}
            # GitHub's `path` takes a file or a folder: the commits that touched it, or anything in it.
            inside = query.get("path", "").rstrip("/") + "/"
            found = [
                c
                for c in reversed(self.file_commits)
                if c.branch == ref
                and ("path" not in query or c.path == query["path"] or c.path.startswith(inside))
            ]
            return self._paginated(path, query, [self._commit_json(c, files=False) for c in found])
        if m := re.fullmatch(r"/commits/([0-9a-f]{40})", sub):
            commit = next((c for c in self.file_commits if c.sha == m[1]), None)
            return (
                (200, self._commit_json(commit, files=True), {})
                if commit
                else (404, {"message": "No commit found"}, {})
            )
        if m := re.fullmatch(r"/branches/(.+)", sub):
            branch = unquote(m[1])
            if branch not in self.branches:
                return 404, {"message": "Branch not found"}, {}
            return (
                200,
                {
                    "name": branch,
                    "commit": {"sha": "c" * 40, "url": self._api("/commits/" + "c" * 40)},
                    "protected": False,
                },
                {},
            )
        if m := re.fullmatch(r"/git/blobs/([0-9a-f]{40})", sub):
            data = self.blobs.get(m[1])
            if data is None:
                return 404, {"message": "Not Found"}, {}
            return (
                200,
                {
                    "sha": m[1],
                    "size": len(data),
                    "encoding": "base64",
                    "content": base64.encodebytes(data).decode(),
                    "url": self._api(sub),
                },
                {},
            )
        if sub == "/git/trees" and method == "POST":
            files = {e["path"]: e["content"].encode() for e in body["tree"]}
            sha = hashlib.sha1(
                json.dumps(sorted((k, v.decode()) for k, v in files.items())).encode()
            ).hexdigest()
            self._trees[sha] = files
            return (
                201,
                {
                    "sha": sha,
                    "url": self._api(f"/git/trees/{sha}"),
                    "tree": [
                        {"path": p, "mode": "100644", "type": "blob", "sha": git_sha(d)}
                        for p, d in files.items()
                    ],
                    "truncated": False,
                },
                {},
            )
        if sub == "/git/commits" and method == "POST":
            if body["tree"] not in self._trees:
                return 422, {"message": "Tree SHA does not exist"}, {}
            sha = hashlib.sha1((body["tree"] + body["message"] + str(next(self._ids))).encode()).hexdigest()
            self._commits[sha] = body["tree"]
            return (
                201,
                {
                    "sha": sha,
                    "url": self._api(f"/git/commits/{sha}"),
                    "message": body["message"],
                    "tree": {"sha": body["tree"], "url": self._api(f"/git/trees/{body['tree']}")},
                    "parents": [{"sha": p} for p in body["parents"]],
                },
                {},
            )
        if sub == "/git/refs" and method == "POST":
            branch = body["ref"].removeprefix("refs/heads/")
            if branch in self.branches:
                return 422, {"message": "Reference already exists"}, {}
            if body["sha"] not in self._commits:
                return 422, {"message": "Object does not exist"}, {}
            self.branches[branch] = {}
            for name, data in self._trees[
                self._commits[body["sha"]]
            ].items():  # the bot's first commit on the branch
                self._record_commit(branch, name, data, self.bot_login, True, "create the data branch")
            return (
                201,
                {
                    "ref": body["ref"],
                    "node_id": "REF_1",
                    "url": self._api(f"/git/{body['ref']}"),
                    "object": {
                        "sha": body["sha"],
                        "type": "commit",
                        "url": self._api(f"/git/commits/{body['sha']}"),
                    },
                },
                {},
            )
        return 404, {"message": "Not Found (FakeGitHubServer does not implement this endpoint)"}, {}

    # --- Checks API (check runs and their annotations) ---------------------------------
    # Kept apart from the other routes: only the `rag-ci gate` check run uses it.
    CHECKS_BATCH = 50  # GitHub refuses more annotations per request (422)

    def _checks(self, method: str, sub: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if self.checks_forbidden and method != "GET":
            return 403, FORBIDDEN, {}
        if sub == "/check-runs" and method == "POST":
            missing = [k for k in ("name", "head_sha") if not body.get(k)]
            if missing:
                return 422, {"message": f"Invalid request: {', '.join(missing)} missing"}, {}
            check_id = next(self._ids) + 300_000
            run = {
                "id": check_id,
                "name": body["name"],
                "head_sha": body["head_sha"],
                "status": body.get("status", "queued"),
                "conclusion": body.get("conclusion"),
                "details_url": body.get("details_url"),
                "url": self._api(f"/check-runs/{check_id}"),
                "html_url": f"https://github.com/{self.repository}/runs/{check_id}",
                "output": {"title": None, "summary": None, "annotations_count": 0},
                "annotations": [],
                "requests": 0,
            }
            self.check_runs[check_id] = run
            problem = self._add_check_output(run, body.get("output"))
            return (422, {"message": problem}, {}) if problem else (201, self._check_json(run), {})
        if (m := re.fullmatch(r"/check-runs/(\d+)", sub)) and method in ("PATCH", "GET"):
            run = self.check_runs.get(int(m[1]))
            if run is None:
                return 404, {"message": "Not Found"}, {}
            problem = self._add_check_output(run, body.get("output")) if method == "PATCH" else None
            return (422, {"message": problem}, {}) if problem else (200, self._check_json(run), {})
        return 404, {"message": "Not Found (FakeGitHubServer does not implement this endpoint)"}, {}

    def _add_check_output(self, run: dict[str, Any], output: dict[str, Any] | None) -> str | None:
        """GitHub's rules: title and summary required with an output, at most 50 annotations per
        request, each with path, start_line, end_line, annotation_level and message; appended."""
        if output is None:
            return None
        if not output.get("title") or not output.get("summary"):
            return "output.title and output.summary are required"
        annotations = output.get("annotations") or []
        if len(annotations) > self.CHECKS_BATCH:
            return f"at most {self.CHECKS_BATCH} annotations per request"
        for a in annotations:
            if (
                not a.get("path")
                or not isinstance(a.get("start_line"), int)
                or not isinstance(a.get("end_line"), int)
                or a.get("annotation_level") not in ("notice", "warning", "failure")
                or not a.get("message")
            ):
                return f"invalid annotation {a!r}"
        run["output"].update(title=output["title"], summary=output["summary"])
        run["annotations"].extend(annotations)
        run["output"]["annotations_count"] = len(run["annotations"])
        run["requests"] += 1
        return None

    def _check_json(self, run: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in run.items() if k not in ("annotations", "requests")} | {
            "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
            "check_suite": {"id": 5},
        }

    # === A repository's year: the clock, retention, deletions, App tokens ======
    # Artifacts expire after their retention (GitHub keeps listing an expired artifact with
    # `expired: true`, and its zip answers 410), artifacts and branches get deleted, main is
    # force-pushed (merge_bases changes), and the token may be a GitHub App's installation
    # token (GET /user 403, comments posted as `<slug>[bot]`) or a personal token. The data
    # branch serves directories (GET contents of a folder) and DELETE contents.
    day: int = 0  # the simulated date, in days since NOW

    def at_day(self, day: int) -> str:
        """The timestamp of day `day` of the simulated year."""
        from datetime import timedelta

        start = datetime(2025, 1, 1, tzinfo=UTC)
        return (start + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def advance(self, days: int) -> None:
        """Let `days` pass: every artifact past its retention expires."""
        self.day += days
        for artifact in self.artifacts:
            if artifact.expires_at <= self.at_day(self.day):
                artifact.expired = True

    def upload_artifact(
        self,
        files: dict[str, bytes | str],
        *,
        run_id: int,
        head_sha: str,
        name: str = "rag-ci-baseline",
        branch: str = "main",
        event: str = "push",
        retention_days: int = 90,
        conclusion: str | None = "success",
    ) -> FakeArtifact:
        """What actions/upload-artifact does in run `run_id` today (retention-days as given)."""
        self.runs.setdefault(run_id, FakeRun(run_id, branch, head_sha, event=event, conclusion=conclusion))
        artifact = FakeArtifact(
            next(self._ids) + 9000,
            name,
            run_id,
            branch,
            head_sha,
            zip_of(files),
            self.at_day(self.day),
            expires_at=self.at_day(self.day + retention_days),
        )
        self.artifacts.append(artifact)
        return artifact

    def delete_artifact(self, artifact: FakeArtifact) -> None:
        self.artifacts.remove(artifact)

    def delete_branch(self, branch: str) -> None:
        """The branch and its files are gone (its commits no longer listed)."""
        self.branches.pop(branch, None)
        self.file_commits = [c for c in self.file_commits if c.branch != branch]

    def use_app_token(self, slug: str) -> None:
        """The token is a GitHub App's installation token: GET /user is 403, it posts as `<slug>[bot]`."""
        self.bot_login, self.user_endpoint_forbidden = f"{slug}[bot]", True

    def use_personal_token(self, login: str) -> None:
        self.bot_login, self.user_endpoint_forbidden = login, False

    def _year_routes(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]] | None:
        """The routes of this block; None: not one of them."""
        prefix = f"/repos/{self.repository}/contents/"
        if not path.startswith(prefix):
            return None
        name = unquote(path[len(prefix) :])
        if method == "GET":
            branch = query.get("ref", "main")
            files = self.branches.get(branch, {})
            if name in files:
                return None  # a file: the contents route above serves it
            inside = sorted(
                p
                for p in files
                if p.startswith(name.rstrip("/") + "/") and "/" not in p[len(name.rstrip("/")) + 1 :]
            )
            if not inside:
                return None
            return (
                200,
                [
                    self._content_json(branch, p, files[p]) | {"content": None, "encoding": None}
                    for p in inside
                ],
                {},
            )
        if method == "DELETE":
            if self.read_only:
                return 403, FORBIDDEN, {}
            branch = body.get("branch", "main")
            files = self.branches.get(branch)
            if files is None or name not in files:
                return 404, {"message": "Not Found"}, {}
            if body.get("sha") != git_sha(files[name]):
                return 409, {"message": f"{name} does not match {body.get('sha')}"}, {}
            commit = self._record_commit(
                branch, name, b"", self.bot_login, True, body.get("message", "delete")
            )
            files.pop(name)
            return (
                200,
                {
                    "content": None,
                    "commit": {
                        "sha": commit.sha,
                        "message": commit.message,
                        "url": self._api(f"/git/commits/{commit.sha}"),
                    },
                },
                {},
            )
        return None

    # === end of the year block ============================================================

    def _contents(
        self, method: str, path: str, query: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        if method == "GET":
            branch = query.get("ref", "main")
            data = self.branches.get(branch, {}).get(path)
            if data is None:
                return 404, {"message": "Not Found"}, {}
            return 200, self._content_json(branch, path, data), {}
        if method == "PUT":
            branch = body.get("branch", "main")
            if branch not in self.branches:
                return 404, {"message": f"Branch {branch} not found"}, {}
            files = self.branches[branch]
            if path in files and "sha" not in body:
                return 422, {"message": 'Invalid request.\n\n"sha" wasn\'t supplied.'}, {}
            if path in files and body["sha"] != git_sha(files[path]):
                return 409, {"message": f"{path} does not match {body['sha']}"}, {}
            created = path not in files
            commit = self._record_commit(
                branch, path, base64.b64decode(body["content"]), self.bot_login, True, body["message"]
            )
            commit_sha = commit.sha
            return (
                (201 if created else 200),
                {
                    "content": self._content_json(branch, path, files[path]),
                    "commit": {
                        "sha": commit_sha,
                        "message": body["message"],
                        "url": self._api(f"/git/commits/{commit_sha}"),
                    },
                },
                {},
            )
        return 405, {"message": "Method not allowed"}, {}

    def _paginated(
        self, path: str, query: dict[str, str], items: list[Any], list_key: str | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(query.get("per_page", 30)), 100)
        page = int(query.get("page", 1))
        pages = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []

        def link(n: int, rel: str) -> str:
            return f'<{self.url}{path}?{urlencode({**query, "page": n})}>; rel="{rel}"'

        if page < pages:
            links += [link(page + 1, "next"), link(pages, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"Link": ", ".join(links)} if links else {}
        data = {"total_count": len(items), list_key: chunk} if list_key else chunk
        return 200, data, headers

    # --- HTTP plumbing -------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                auth = self.headers.get("Authorization")
                authorized = auth in (f"token {fake.token}", f"Bearer {fake.token}")
                record = RecordedRequest(
                    self.command,
                    parts.path,
                    query,
                    (self.headers.get("Host") or "").split(":")[0],
                    authorized,
                    auth is not None,
                    body,
                )
                with fake._lock:
                    fake.requests.append(record)
                    injected = next(
                        (i for i in fake._injected if i[0] == self.command and parts.path.startswith(i[1])),
                        None,
                    )
                    if injected is not None:
                        fake._injected.remove(injected)
                        if not injected[2]:  # a skipped one: this request is answered as usual
                            injected = None
                    if injected is not None:
                        status, data, headers = injected[2], injected[3], {}
                    elif not parts.path.startswith("/_blobs/") and not authorized:
                        status, data, headers = 401, {"message": "Bad credentials"}, {}
                    else:
                        try:
                            status, data, headers = fake._handle(self.command, parts.path, query, body)
                        except Exception as exc:  # a bug in the fake: say so instead of hanging
                            status, data, headers = 500, {"message": f"FakeGitHubServer error: {exc!r}"}, {}
                    record.status = status
                payload = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                if not isinstance(data, bytes):
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        return Handler
