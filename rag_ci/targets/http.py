"""`kind: http`: POST each request to a URL; optionally launch the server first.

With `target.request`/`target.response` (rag_ci/core/base/api_mapping.py) the body
sent is the app's own request shape and its reply is read into the contract's shape, so
an existing API needs no adapter code.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from rag_ci.core.base.api_mapping import map_contexts, map_reply, render_request
from rag_ci.core.config import DockerTargetConfig, HttpTargetConfig
from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.base import ArrivedReply
from rag_ci.targets.processes import OutputTail, finish_reader, target_process_kwargs
from rag_ci.targets.reply_clock import reply_arrived
from rag_ci.targets.reply_json import load_reply_off_loop
from rag_ci.targets.server_process import errors_first, stop_group


def mapping_arguments(config: HttpTargetConfig | DockerTargetConfig) -> dict[str, Any]:
    """HttpTarget's arguments for `target.request`/`target.response` (docs/targets.md)."""
    return {
        "request_template": config.request,
        "response_map": config.response.model_dump() if config.response is not None else None,
        "retrieve": config.retrieve.model_dump() if config.retrieve is not None else None,
    }


class HttpTarget:
    def __init__(
        self,
        url: str,
        *,
        timeout_s: float,
        headers: dict[str, str] | None = None,
        health_url: str | None = None,
        startup_timeout_s: float = 60.0,
        start: list[str] | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        max_connections: int = 64,
        request_template: Any = None,
        response_map: dict[str, Any] | None = None,
        retrieve: dict[str, Any] | None = None,
    ):
        self.url = url
        self.request_template = request_template
        self.response_map = response_map
        # `target.retrieve`: the search call beside the answer call, its URL taken on `url`'s host.
        self.retrieve = retrieve
        self.retrieve_url = urljoin(url, retrieve["url"]) if retrieve else None
        self.max_parallel: int | None = None  # the server queues; target.concurrency bounds the calls
        self.timeout_s = timeout_s
        self.headers = headers or {}
        # A relative health path ("/health") is taken on the query URL's host.
        self.health_url = urljoin(url, health_url) if health_url else None
        self.startup_timeout_s = startup_timeout_s
        self.start_command = list(start) if start else None
        self.cwd = cwd
        # env (allow-listed), and user under root
        self.process_kwargs = target_process_kwargs(env, project_dir=cwd)
        self.output = OutputTail()
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        # a question in flight holds both its calls' connections
        connections = max_connections * (2 if retrieve else 1)
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )

    async def start(self) -> None:
        if self.start_command:
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *self.start_command,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                    cwd=self.cwd,
                    start_new_session=True,  # its own process group, stopped whole (server_process)
                    **self.process_kwargs,
                )
            except OSError as exc:
                raise RagCiError(f"cannot start target server {self.start_command}: {exc}") from exc
            self._reader = asyncio.create_task(self.output.follow(self._process.stdout))
        if self.health_url or self.start_command:
            await self.wait_healthy(self.health_url or self.url)
            # the search call's server may be another one, started by the same command: ready too
            if self.retrieve_url and _origin(self.retrieve_url) != _origin(self.health_url or self.url):
                await self.wait_healthy(self.retrieve_url)

    async def wait_healthy(self, url: str) -> None:
        """Poll until the URL answers (2xx for a health URL; anything but a refusal otherwise)."""
        deadline = time.monotonic() + self.startup_timeout_s
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self._process is not None and self._process.returncode is not None:
                await self._drain()
                raise RagCiError(
                    f"target server exited during start-up (code {self._process.returncode}):\n{self.output.text(20)}"
                )
            try:
                response = await self._client.get(url, timeout=2.0)
                if response.is_success or (url != self.health_url and response.status_code < 500):
                    return
                last = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}"
            await asyncio.sleep(0.1)
        await self.stop()
        raise RagCiError(
            f"target not healthy after {self.startup_timeout_s:.0f}s at {url} ({last})\n{self.output.text(20)}"
        )

    async def query(self, request: dict[str, Any]) -> Any:
        if self.retrieve is None:
            response = await self.answer_call(request)
            reply_arrived()  # the body is all here: reading it is rag-ci's time (reply_clock.py)
            return await self.read_answer(response)
        if self.retrieve.get("order") == "after":
            # the search once the answer is in, for an app that cannot take both at once (both
            # under the question's time-out); the question's latency is the answer's
            answer = await self.answer_call(request)
            arrived_at = time.perf_counter()
            search = await self.search_call(request)
            reply_arrived()
            return ArrivedReply(await self.joined(answer, search), arrived_at)
        # Both calls at once, under the same timeout; either failing fails the question (one
        # target error for the breaker), so a search outage never reads as "no contexts".
        responses = await asyncio.gather(
            self.answer_call(request), self.search_call(request), return_exceptions=True
        )
        for (
            outcome
        ) in responses:  # both calls end (each bounded by the timeout) before either error is raised
            if isinstance(outcome, BaseException):
                raise outcome
        reply_arrived()
        answered, searched = responses
        assert isinstance(answered, httpx.Response) and isinstance(searched, httpx.Response)
        return await self.joined(answered, searched)

    async def joined(self, answered: httpx.Response, searched: httpx.Response) -> Any:
        """The answer call's reply, with the search call's contexts after its own."""
        assert self.retrieve is not None
        reply = await self.read_answer(answered)
        contexts = map_contexts(
            self.retrieve["response"], await self.read(searched), section="target.retrieve.response"
        )
        if not isinstance(reply, dict):
            return reply  # not an object: the contract's check (parse_reply) says so
        found = reply.get("contexts")
        reply["contexts"] = [*(found if isinstance(found, list) else []), *contexts]
        return reply

    async def answer_call(self, request: dict[str, Any]) -> httpx.Response:
        body = request if self.request_template is None else render_request(self.request_template, request)
        return await self.call("POST", self.url, body, traceparent=request.get("traceparent"))

    async def read_answer(self, response: httpx.Response) -> Any:
        reply = await self.read(response)
        return reply if self.response_map is None else map_reply(self.response_map, reply)

    async def search_call(self, request: dict[str, Any]) -> httpx.Response:
        """`target.retrieve`'s call for this question (its contexts: map_contexts of its reply)."""
        assert self.retrieve is not None and self.retrieve_url is not None
        template = self.retrieve.get("request")
        body = request if template is None else render_request(template, request)
        return await self.call(
            self.retrieve["method"],
            self.retrieve_url,
            body,
            what="search call",
            traceparent=request.get("traceparent"),
        )

    async def call(
        self, method: str, url: str, body: Any, what: str = "target", traceparent: str | None = None
    ) -> httpx.Response:
        """One JSON call (POST body, or GET query parameters): its response, body received.
        `traceparent`: the question's W3C trace context, sent as the header (docs/traces.md)."""
        headers = {**self.headers, "traceparent": traceparent} if traceparent else self.headers
        try:
            if method == "GET":
                response = await self._client.get(url, params=body, headers=headers)
            else:
                response = await self._client.post(url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise TargetError(f"{what} did not answer within {self.timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            raise TargetError(f"{what} unreachable: {type(exc).__name__}: {exc}") from None
        except (TypeError, ValueError) as exc:  # GET parameters httpx cannot encode (a nested object)
            raise TargetError(
                f"{what}: target.retrieve.request cannot be sent as query parameters: {exc}"
            ) from None
        if response.status_code >= 400:
            raise TargetError(f"{what} answered HTTP {response.status_code}: {response.text[:300]}")
        return response

    @staticmethod
    async def read(response: httpx.Response) -> Any:
        """The response's JSON value."""
        try:
            # Bounded in size and depth before parsing; a long reply in a worker thread, so the
            # other questions in flight are not held up (nor timed out) meanwhile.
            return await load_reply_off_loop(response.content)
        except ValueError:
            raise TargetError(f"malformed response: not JSON: {response.text[:200]!r}") from None

    async def stop(self) -> None:
        await self._client.aclose()
        await stop_group(self._process)
        await self._drain()

    async def _drain(self) -> None:
        await finish_reader(self._reader)
        self._reader = None

    def diagnostics(self) -> str:
        return errors_first(self.output)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
