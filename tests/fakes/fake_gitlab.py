"""FakeGitLabServer: a fake of GitLab's REST API v4, for tests only.

A real HTTP server (127.0.0.1, random port) with the endpoints rag-ci calls, in GitLab's
shapes: `GET /user`, a merge request's notes (list with offset pagination — `X-Next-Page`,
`X-Total`, `Link` —, create, update; only a note's author may update it, 403 otherwise; a body
over 1,000,000 characters is 400), and the job-artifacts file the GitLab recipe fetches its
baseline from (`JOB-TOKEN`). Tokens go in `PRIVATE-TOKEN` (401 without a known one); each token
is one user. `inject` answers the next matching requests with a status (429 with Retry-After,
401, 403, 5xx). Every request is recorded (method, path, query, which user's token it carried,
status); token values never are.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

NOTE_LIMIT = 1_000_000
NOW = "2025-01-01T00:00:00.000Z"


@dataclasses.dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    user: str | None  # the username whose token it carried; None: no known token
    body: Any
    status: int = 0


class FakeGitLabServer:
    """One GitLab project ("42", path "group/rag") with merge requests and their notes."""

    def __init__(self, *, project_id: int = 42, project_path: str = "group/rag"):
        self.project_id, self.project_path = project_id, project_path
        self.users: dict[str, dict[str, Any]] = {}  # token -> {"id", "username"}
        self.job_token: str | None = None
        self.artifacts: dict[tuple[str, str, str], bytes] = {}  # (ref, path, job) -> bytes
        self.notes: dict[int, list[dict[str, Any]]] = {}  # merge request iid -> notes, oldest first
        self.requests: list[Recorded] = []
        self._injected: list[tuple[str, str, int, dict[str, str]]] = []
        self._ids = itertools.count(1000)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())

    # --- lifecycle -----------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v4"

    def __enter__(self) -> FakeGitLabServer:
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- arranging state -----------------------------------------------------------
    def add_user(self, token: str, username: str) -> dict[str, Any]:
        user = {"id": next(self._ids), "username": username, "name": username}
        self.users[token] = user
        return user

    def add_note(
        self, merge_request: int, body: str, *, author: dict[str, Any], system: bool = False
    ) -> dict[str, Any]:
        note = {
            "id": next(self._ids),
            "body": body,
            "author": dict(author),
            "system": system,
            "created_at": NOW,
            "noteable_type": "MergeRequest",
            "noteable_iid": merge_request,
        }
        self.notes.setdefault(merge_request, []).append(note)
        return note

    def add_artifact(self, ref: str, path: str, job: str, data: bytes) -> None:
        self.artifacts[(ref, path, job)] = data

    def inject(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next `times` requests `method` whose path matches `path_pattern` (a regex) with `status`."""
        for _ in range(times):
            self._injected.append((method, path_pattern, status, headers or {}))

    def routes(self) -> list[str]:
        numbers = re.compile(r"/\d+")
        return [r.method + " " + numbers.sub("/{n}", r.path) for r in self.requests]

    # --- the API -------------------------------------------------------------------
    def _handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        user: dict[str, Any] | None,
        headers: Any,
    ) -> tuple[int, Any, dict[str, str]]:
        if m := re.fullmatch(r"/api/v4/projects/([^/]+)/jobs/artifacts/([^/]+)/raw/(.+)", path):
            return self._artifact(m, query, headers)
        if user is None:
            return 401, {"message": "401 Unauthorized"}, {}
        if path == "/api/v4/user" and method == "GET":
            return 200, user, {}
        m = re.fullmatch(r"/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes(?:/(\d+))?", path)
        if m is None or unquote(m[1]) not in (str(self.project_id), self.project_path):
            return 404, {"message": "404 Not Found"}, {}
        notes = self.notes.setdefault(int(m[2]), [])
        if method == "GET" and m[3] is None:
            return self._page(path, query, notes)
        if method == "POST" and m[3] is None:
            if problem := self._body_problem(body):
                return 400, problem, {}
            return 201, self.add_note(int(m[2]), body["body"], author=user), {}
        if method == "PUT" and m[3] is not None:
            note = next((n for n in notes if n["id"] == int(m[3])), None)
            if note is None:
                return 404, {"message": "404 Note Not Found"}, {}
            if note["author"]["id"] != user["id"]:
                return 403, {"message": "403 Forbidden"}, {}
            if problem := self._body_problem(body):
                return 400, problem, {}
            note["body"] = body["body"]
            return 200, note, {}
        return 405, {"message": "405 Method Not Allowed"}, {}

    def _artifact(
        self, m: re.Match[str], query: dict[str, str], headers: Any
    ) -> tuple[int, Any, dict[str, str]]:
        if self.job_token is None or headers.get("JOB-TOKEN") != self.job_token:
            return 401, {"message": "401 Unauthorized"}, {}
        data = self.artifacts.get((m[2], m[3], query.get("job", "")))
        return (200, data, {}) if data is not None else (404, {"message": "404 Not found"}, {})

    @staticmethod
    def _body_problem(body: Any) -> dict[str, Any] | None:
        if not isinstance(body, dict) or not isinstance(body.get("body"), str) or not body["body"]:
            return {"message": "400 Bad request - body is missing"}
        if len(body["body"]) > NOTE_LIMIT:
            return {"message": {"note": [f"is too long (maximum is {NOTE_LIMIT} characters)"]}}
        return None

    def _page(self, path: str, query: dict[str, str], items: list[Any]) -> tuple[int, Any, dict[str, str]]:
        per_page = max(1, min(int(query.get("per_page", 20)), 100))
        page = max(1, int(query.get("page", 1)))
        pages = max(1, -(-len(items) // per_page))
        ordered = items if query.get("sort", "desc") == "asc" else list(reversed(items))
        headers = {
            "X-Page": str(page),
            "X-Per-Page": str(per_page),
            "X-Total": str(len(items)),
            "X-Total-Pages": str(pages),
        }
        headers["X-Next-Page"] = str(page + 1) if page < pages else ""
        if page < pages:
            headers["Link"] = (
                f'<{self.url.removesuffix("/api/v4")}{path}?{urlencode({**query, "page": page + 1})}>; rel="next"'
            )
        return 200, ordered[(page - 1) * per_page : page * per_page], headers

    # --- HTTP plumbing -------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
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
                user = fake.users.get(self.headers.get("PRIVATE-TOKEN") or "")
                record = Recorded(self.command, parts.path, query, user["username"] if user else None, body)
                with fake._lock:
                    fake.requests.append(record)
                    injected = next(
                        (i for i in fake._injected if i[0] == self.command and re.search(i[1], parts.path)),
                        None,
                    )
                    if injected is not None:
                        fake._injected.remove(injected)
                        status, data, headers = (
                            injected[2],
                            {"message": f"{injected[2]} injected"},
                            injected[3],
                        )
                    else:
                        try:
                            status, data, headers = fake._handle(
                                self.command, parts.path, query, body, user, self.headers
                            )
                        except Exception as exc:  # a bug in the fake: say so instead of hanging
                            status, data, headers = 500, {"message": f"FakeGitLabServer error: {exc!r}"}, {}
                    record.status = status
                payload = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                if not isinstance(data, bytes):
                    self.send_header("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        return Handler
