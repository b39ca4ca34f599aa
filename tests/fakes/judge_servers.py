"""Fake LLM judge servers: real HTTP on 127.0.0.1, speaking each provider's wire protocol.

rag-ci's judges use the providers' official SDKs; these servers are the outer edge
the tests fake (never the SDKs). Each server answers DeepEval's metric prompts
with valid JSON decided by `JudgePolicy` (rag_ci/judges/fake.py):

    FakeOpenAIJudgeServer     POST /v1/chat/completions      (incl. response_format json_schema)
    FakeAnthropicJudgeServer  POST /v1/messages              (forced tool use → tool_use block)
    FakeGeminiJudgeServer     POST /v1beta/models/M:generateContent
    FakeOllamaJudgeServer     POST /api/chat
    FakeAzureOpenAIJudgeServer, FakeBedrockJudgeServer (SigV4 verified), FakeVertexJudgeServer:
                              fakes/cloud_judge_servers.py

Usage (also by the benchmarks; needs `tests/` on sys.path, as conftest.py does):

    from fakes.judge_servers import FakeOpenAIJudgeServer
    with FakeOpenAIJudgeServer(latency_s=0.2) as server:
        # rag-ci.yml: judge: {provider: openai-compatible, model: ..., base_url: <server.base_url>}
        # or: rag-ci run --judge openai-compatible:Qwen/Qwen2.5-7B-Instruct@<server.base_url>
        ...
        server.requests                              # judge calls received

`fakes.judge_setup.judge_config(provider, server)` builds a Config aimed at a server.

Scripting: `latency_s` per request; `queue_faults("429", "500", "invalid_json",
"hang", "400")` makes the next requests fail in that order ("hang": no answer for `hang_s`, or
until the server stops when `hang_s=None`; 429 carries
`Retry-After: retry_after`); `always_fault="500"` fails every request; `always_invalid_json`;
`fail_rejudging(text, "500", always="hang")` fails the prompts holding `text` when they are asked
again (re-judgements); `always_fault="401", quote_key="full" | "split" | "wrapped"` answers 401 quoting the API key it was sent, as
real gateways do ("Incorrect API key provided: sk-…"; "split": cut across two lines); `policy=JudgePolicy(flip_probability=…,
seed=…)` for a seeded flipping judge. Observing: `requests` (calls received),
`max_in_flight` (peak concurrency), `presented_keys` (the API keys sent), `log` (every answered request: arrival time,
path, prompt kind, status, body), `kinds()`; `reset()` clears them between runs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from rag_ci.judges.fake import JudgePolicy, UnknownPrompt

INVALID_JSON = 'Sure! Here is my verdict: {"verdicts": [{"verdict": "yes",'


@dataclass(frozen=True)
class LoggedRequest:
    at: float
    path: str
    kind: str | None
    status: int
    body: dict


class _Reply(Exception):
    """Raised inside a handler to send an error status."""

    def __init__(self, status: int, body: dict, headers: dict[str, str] | None = None):
        self.status, self.body, self.headers = status, body, headers or {}


class FakeJudgeServer:
    """Base: threading HTTP server, fault queue, request log. Subclasses speak one protocol."""

    path_prefix = ""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        policy: JudgePolicy | None = None,
        retry_after: str = "1",
        hang_s: float | None = 5.0,
        always_invalid_json: bool = False,
        always_fault: str | None = None,
        request_limit: int | None = None,
        quote_key: str | None = None,
    ):
        self.latency_s = latency_s
        self.quote_key = quote_key  # with a 401: the key presented, quoted in the error ("full" or "split")
        self.policy = policy or JudgePolicy()
        self.retry_after = retry_after
        self.hang_s = hang_s  # None: a hanging request is answered only when the server stops
        self._stopping = threading.Event()  # set by stop(): releases the hanging requests
        self.always_invalid_json = always_invalid_json
        self.always_fault = always_fault  # a judge down for good: every request fails this way
        # With a request_limit, replies carry the provider's rate-limit headers: that limit,
        # and what is left of it (the limit minus the requests received so far).
        self.request_limit = request_limit
        self.log: list[LoggedRequest] = []
        self.received = 0  # requests that arrived (a hanging one is counted before it is logged)
        self.presented_keys: set[str] = set()  # the API keys requests carried
        self.in_flight = 0
        self.max_in_flight = 0  # highest number of requests served at the same time
        self._faults: deque[str] = deque()
        # Re-judgements (a prompt asked again) whose prompt holds a given text fail as scripted.
        self._asked: set[str] = set()
        self._rejudge_text: str | None = None
        self._rejudge_faults: deque[str] = deque()
        self._rejudge_always: str | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> FakeJudgeServer:
        server = self
        self._stopping.clear()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                server._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        """What to put in `judge.base_url` for this provider."""
        return self.url + self.path_prefix

    # -- scripting -------------------------------------------------------------

    def queue_faults(self, *faults: str) -> None:
        """Make the next requests fail, in order: '429', '500', '503', '400', 'invalid_json', 'hang'."""
        with self._lock:
            self._faults.extend(faults)

    def fail_rejudging(self, containing: str, *faults: str, always: str | None = None) -> None:
        """Make the judge fail when it is asked a prompt again (a re-judgement) that holds
        `containing` (an answer's text): the next ones fail with `faults` in order, then `always`."""
        with self._lock:
            self._rejudge_text = containing
            self._rejudge_faults.extend(faults)
            self._rejudge_always = always

    def _rejudge_fault(self, prompt: str) -> str | None:
        with self._lock:
            again = prompt in self._asked
            self._asked.add(prompt)
            if not again or self._rejudge_text is None or self._rejudge_text not in prompt:
                return None
            return self._rejudge_faults.popleft() if self._rejudge_faults else self._rejudge_always

    @property
    def requests(self) -> int:
        """Judge calls received so far."""
        with self._lock:
            return self.received

    def kinds(self) -> list[str | None]:
        with self._lock:
            return [r.kind for r in self.log]

    def reset(self) -> None:
        with self._lock:
            self.log.clear()
            self._faults.clear()
            self.received = 0
            self.max_in_flight = 0
            self.presented_keys.clear()

    # -- request handling --------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        started = time.time()
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        with self._lock:
            fault = self._faults.popleft() if self._faults else self.always_fault
            self.received += 1
            if key := self.presented_key(handler):
                self.presented_keys.add(key)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        kind = None
        try:
            if fault == "401":  # a gateway checks the key before it reads the request
                raise _Reply(401, self.error_body(401, self.rejected_key_message(handler)))
            self.authenticate(handler, raw)
            prompt = self.prompt_of(handler.path, body)
            kind = self.policy.kind(prompt)
            fault = self._rejudge_fault(prompt) or fault
            if self.latency_s:
                time.sleep(self.latency_s)
            if fault == "hang":
                self._stopping.wait(self.hang_s)
            if fault in ("429", "500", "503", "400"):
                status = int(fault)
                headers = {"Retry-After": self.retry_after} if status == 429 else {}
                raise _Reply(status, self.error_body(status, "fake judge: scripted failure"), headers)
            if fault is not None and fault in self.provider_faults:
                raise self.provider_faults[fault](self)
            invalid = fault == "invalid_json" or self.always_invalid_json
            status, payload = 200, self.reply(body, None if invalid else self.policy.answer(prompt), prompt)
            headers: dict[str, str] = self.budget_headers()
        except UnknownPrompt as exc:
            status, payload, headers = 400, self.error_body(400, f"fake judge: unknown prompt: {exc}"), {}
        except _Reply as reply:
            status, payload, headers = reply.status, reply.body, reply.headers
        with self._lock:
            self.log.append(LoggedRequest(started, handler.path, kind, status, body))
            self.in_flight -= 1
        data = json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (time-out test)

    @staticmethod
    def presented_key(handler: BaseHTTPRequestHandler) -> str:
        auth = handler.headers.get("Authorization") or ""
        return (
            auth.removeprefix("Bearer ").strip()
            or handler.headers.get("x-api-key")
            or handler.headers.get("x-goog-api-key")
            or ""
        )

    def rejected_key_message(self, handler: BaseHTTPRequestHandler) -> str:
        """A gateway's 401 message, with the key it was given in it (`quote_key`)."""
        key = self.presented_key(handler)
        if self.quote_key == "split":
            half = len(key) // 2
            key = key[:half] + "\n" + key[half:]
        if self.quote_key == "wrapped":  # a gateway that wraps its message at a width, indenting
            half = len(key) // 2
            key = key[:half] + "\n    " + key[half:]
        quoted = key if self.quote_key else "sk-...redacted"
        return f"Incorrect API key provided: {quoted}. You can find your API key at https://platform.example/account/api-keys."

    rate_limit_headers: tuple[str, str] | None = None  # (limit, remaining) header names of the provider
    # Faults in a provider's own words (a content filter, a quota): fault name → the error reply.
    provider_faults: ClassVar[dict[str, Any]] = {}

    def authenticate(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        """Raise _Reply(401/403) when the request's credentials are not the server's (the clouds' servers check)."""

    def budget_headers(self) -> dict[str, str]:
        if self.request_limit is None or self.rate_limit_headers is None:
            return {}
        with self._lock:
            remaining = max(0, self.request_limit - self.received)
        limit_name, remaining_name = self.rate_limit_headers
        return {limit_name: str(self.request_limit), remaining_name: str(remaining)}

    # -- protocol hooks ------------------------------------------------------------

    def prompt_of(self, path: str, body: dict) -> str:
        raise NotImplementedError

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        """The provider's success body; `answer` None means: reply with invalid JSON."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict:
        return {"error": {"message": message, "code": status}}


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


class FakeOpenAIJudgeServer(FakeJudgeServer):
    """OpenAI chat completions (also what vLLM / llama.cpp / LM Studio serve)."""

    path_prefix = "/v1"
    rate_limit_headers = ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests")

    def prompt_of(self, path: str, body: dict) -> str:
        if not path.endswith("/chat/completions"):
            raise _Reply(404, self.error_body(404, f"no route {path}"))
        return _text_of(body["messages"][-1]["content"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        fmt = body.get("response_format") or {}
        if fmt and (fmt.get("type") != "json_schema" or "schema" not in fmt.get("json_schema", {})):
            raise _Reply(400, self.error_body(400, "response_format must be json_schema with a schema"))
        content = INVALID_JSON if answer is None else json.dumps(answer)
        return {
            "id": f"chatcmpl-fake-{len(self.log)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": _tokens(prompt),
                "completion_tokens": _tokens(content),
                "total_tokens": _tokens(prompt) + _tokens(content),
            },
        }

    def error_body(self, status: int, message: str) -> dict:
        kind = (
            "rate_limit_error"
            if status == 429
            else "server_error"
            if status >= 500
            else "invalid_request_error"
        )
        return {"error": {"message": message, "type": kind, "code": str(status)}}


class FakeAnthropicJudgeServer(FakeJudgeServer):
    """Anthropic messages; answers a forced tool with a tool_use block."""

    rate_limit_headers = ("anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining")

    def prompt_of(self, path: str, body: dict) -> str:
        if not path.endswith("/v1/messages"):
            raise _Reply(404, self.error_body(404, f"no route {path}"))
        return _text_of(body["messages"][-1]["content"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        tools = body.get("tools") or []
        if answer is None or not tools:
            text = INVALID_JSON if answer is None else json.dumps(answer)
            content, stop, out = [{"type": "text", "text": text}], "end_turn", text
        else:
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_fake_{len(self.log)}",
                    "name": tools[0]["name"],
                    "input": answer,
                }
            ]
            stop, out = "tool_use", json.dumps(answer)
        return {
            "id": f"msg_fake_{len(self.log)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": _tokens(prompt), "output_tokens": _tokens(out)},
        }

    def error_body(self, status: int, message: str) -> dict:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}


class FakeGeminiJudgeServer(FakeJudgeServer):
    """Gemini API generateContent (google-genai SDK)."""

    def prompt_of(self, path: str, body: dict) -> str:
        if ":generateContent" not in path:
            raise _Reply(404, self.error_body(404, f"no route {path}"))
        return "".join(p.get("text", "") for p in body["contents"][-1]["parts"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        text = INVALID_JSON if answer is None else json.dumps(answer)
        return {
            "candidates": [
                {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": _tokens(prompt),
                "candidatesTokenCount": _tokens(text),
                "totalTokenCount": _tokens(prompt) + _tokens(text),
            },
        }

    def error_body(self, status: int, message: str) -> dict:
        name = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT", 503: "UNAVAILABLE"}.get(
            status, "INTERNAL"
        )
        return {"error": {"code": status, "message": message, "status": name}}


class FakeOllamaJudgeServer(FakeJudgeServer):
    """Ollama's native API, /api/chat (non-streaming)."""

    def prompt_of(self, path: str, body: dict) -> str:
        if path != "/api/chat":
            raise _Reply(404, {"error": f"no route {path}"})
        return _text_of(body["messages"][-1]["content"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        text = INVALID_JSON if answer is None else json.dumps(answer)
        return {
            "model": body.get("model", ""),
            "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1,
            "prompt_eval_count": _tokens(prompt),
            "eval_count": _tokens(text),
        }

    def error_body(self, status: int, message: str) -> dict:
        return {"error": message}


# The clouds' servers build on the ones above (Azure speaks OpenAI's bodies, Vertex Gemini's and
# Anthropic's): imported last.
from fakes.cloud_judge_servers import (  # noqa: E402
    FakeAzureOpenAIJudgeServer,
    FakeBedrockJudgeServer,
    FakeVertexJudgeServer,
)

SERVERS = {
    "openai": FakeOpenAIJudgeServer,
    "openai-compatible": FakeOpenAIJudgeServer,
    "anthropic": FakeAnthropicJudgeServer,
    "gemini": FakeGeminiJudgeServer,
    "ollama": FakeOllamaJudgeServer,
    "azure-openai": FakeAzureOpenAIJudgeServer,
    "bedrock": FakeBedrockJudgeServer,
    "vertex": FakeVertexJudgeServer,
}
