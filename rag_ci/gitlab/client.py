"""GitLab's REST API v4, the few calls rag-ci makes: who the token is, and a merge request's
notes (list every page, create, update). Standard-library HTTP: no dependency of its own.

The token (a project's or group's access token, `api` scope) goes in the PRIVATE-TOKEN header
to the API's own host and nowhere else: pages are followed by number (`X-Next-Page`), never by
a URL the server hands back. It is never printed: every message GitLab sends back is redacted
before it reaches an error. 429 and 502/503/504 are retried after `Retry-After` (capped), a few
times; 401 and 403 say what the token lacks.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from rag_ci.errors import RagCiError
from rag_ci.safety.redaction import Redactor
from rag_ci.safety.secret import Secret

RETRIED = (429, 502, 503, 504)
MAX_WAIT_S = 60.0  # the longest Retry-After honoured; a longer one is waited out this long
PER_PAGE = 100


class GitLabError(RagCiError):
    """A GitLab call failed; the message says which and what to do (exit 2)."""


@dataclass(frozen=True)
class Note:
    id: int
    body: str
    author_id: int
    system: bool = False  # GitLab's own notes ("added 1 commit"): never ours

    @classmethod
    def of(cls, data: dict[str, Any]) -> Note:
        return cls(
            id=int(data["id"]),
            body=str(data.get("body") or ""),
            author_id=int((data.get("author") or {}).get("id") or 0),
            system=bool(data.get("system")),
        )


class GitLabProject:
    """One project of one GitLab instance, as the token sees it."""

    def __init__(
        self,
        api_url: str,
        project: str,
        token: Secret,
        *,
        retries: int = 3,
        timeout_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise GitLabError(f"the GitLab API URL must be http(s)://host/api/v4, got {api_url!r}")
        if not token:
            raise GitLabError("no GitLab token: the variable that should hold it is empty or not set")
        self.api_url = api_url.rstrip("/")
        self.project = project
        self._token = token
        self._redact = Redactor([token.reveal()])
        self.retries, self.timeout_s, self.sleep = retries, timeout_s, sleep

    # --- the calls -------------------------------------------------------------------
    def user_id(self) -> int:
        """The id of the token's user (a project access token's bot user)."""
        data, _ = self._call("GET", "/user", what="ask GitLab who the token is (GET /user)")
        return int(data["id"])

    def notes(self, merge_request: int) -> list[Note]:
        """Every note of the merge request, oldest first, every page."""
        notes: list[Note] = []
        page: str | None = "1"
        while page:
            data, headers = self._call(
                "GET",
                self._mr(merge_request, "/notes"),
                query={"sort": "asc", "order_by": "created_at", "per_page": PER_PAGE, "page": page},
                what=f"list the notes of merge request !{merge_request}",
            )
            notes += [Note.of(item) for item in data]
            page = (headers.get("X-Next-Page") or "").strip() or None
        return notes

    def create_note(self, merge_request: int, body: str) -> Note:
        data, _ = self._call(
            "POST",
            self._mr(merge_request, "/notes"),
            body={"body": body},
            what=f"note merge request !{merge_request}",
        )
        return Note.of(data)

    def update_note(self, merge_request: int, note_id: int, body: str) -> Note:
        data, _ = self._call(
            "PUT",
            self._mr(merge_request, f"/notes/{note_id}"),
            body={"body": body},
            what=f"edit note {note_id} of merge request !{merge_request}",
        )
        return Note.of(data)

    # --- the wire ----------------------------------------------------------------------
    def _mr(self, merge_request: int, tail: str) -> str:
        return f"/projects/{quote(self.project, safe='')}/merge_requests/{int(merge_request)}{tail}"

    def _call(
        self, method: str, path: str, *, what: str, query: dict[str, Any] | None = None, body: Any = None
    ) -> tuple[Any, Message]:
        url = self.api_url + path + (f"?{urlencode(query)}" if query else "")
        data = None if body is None else json.dumps(body).encode("utf-8")
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(url, data=data, method=method)
            request.add_header("PRIVATE-TOKEN", self._token.reveal())
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with _OPENER.open(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read() or b"null"), response.headers
            except urllib.error.HTTPError as exc:
                if exc.code in RETRIED and attempt < self.retries:
                    self.sleep(_retry_after(exc.headers.get("Retry-After"), attempt))
                    continue
                raise GitLabError(f"could not {what}: {self._explain(exc)}") from None
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", exc)
                raise GitLabError(
                    f"could not {what}: GitLab at {self.api_url} did not answer ({reason})"
                ) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _explain(self, exc: urllib.error.HTTPError) -> str:
        try:
            data = json.loads(exc.read() or b"{}")
        except (ValueError, OSError):
            data = {}
        message = (data.get("message") or data.get("error") or "") if isinstance(data, dict) else ""
        said = self._redact(str(message))[:300]
        status = f"HTTP {exc.code}" + (f" ({said})" if said else "")
        if exc.code == 401:
            return f"{status}: the token was refused; give a valid project or group access token"
        if exc.code == 403:
            return (
                f"{status}: the token may not do this; it needs the `api` scope and at least the "
                "Reporter role in the project"
            )
        if exc.code == 404:
            return f"{status}: no such project or merge request ({self.project}), or the token cannot see it"
        if exc.code == 429:
            return f"{status}: still rate-limited after {self.retries} retries; re-run the job"
        return status


def _retry_after(value: str | None, attempt: int) -> float:
    """Retry-After in seconds (GitLab sends a number), capped; without one, 1, 2, 4 s."""
    try:
        return min(max(float(value or ""), 0.0), MAX_WAIT_S)
    except ValueError:
        return float(2**attempt)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect would carry PRIVATE-TOKEN to wherever it points: refused, shown as the error it is."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)
