"""SimulatedOpenAIJudge: a judge LLM *simulator* for benchmarks (not a model, not a mock of rag-ci).

A real HTTP/1.1 server on 127.0.0.1 speaking the OpenAI chat-completions wire
format (`POST /v1/chat/completions`). It answers DeepEval's metric prompts with the
deterministic policy of rag-ci's fake judge (rag_ci/judges/fake.py: which prompt
it is, then a term-overlap verdict), so rag-ci and plain DeepEval can be pointed at
it with `base_url` exactly as at a vLLM or OpenAI endpoint. What it simulates is
the judge's *cost in time*:

- `latency_s`: every answered request takes this long (asyncio sleep: no CPU);
- `capacity`: at most this many requests are served at once, the rest queue in
  arrival order (a self-hosted judge with N slots, or a provider's concurrency
  limit). None = unlimited;
- `rate_limit`: at most this many requests are *accepted* per sliding second; past
  it the server answers `429` at once with `Retry-After` (seconds, rounded up) and
  `retry-after-ms` (exact), like OpenAI. None = no limit.

`GET /stats` returns the request counters as JSON (answered, rate_limited, by
prompt kind, errors) and `POST /reset` zeroes them. Run it in its own process
(`JudgeProcess`, or `python -m benchmarks.simulated_judge --latency 0.2 ...`) so its
CPU never competes with the event loop being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Self

from benchmarks import promptfoo_grader
from rag_ci.judges.fake import JudgePolicy, UnknownPrompt

REPO = Path(__file__).resolve().parents[1]


class SimulatedOpenAIJudge:
    def __init__(
        self,
        *,
        latency_s: float = 0.2,
        capacity: int | None = None,
        rate_limit: float | None = None,
        model: str = "gpt-4.1-mini-2025-04-14",
        flip: float = 0.0,
        seed: int = 0,
    ):
        self.latency_s = latency_s
        self.capacity = capacity
        self.rate_limit = rate_limit
        self.model = model
        self.policy = JudgePolicy(flip_probability=flip, seed=seed)  # flip: a judge disagreeing with itself
        self._slots: asyncio.Semaphore | None = None
        self._accepted: collections.deque[float] = collections.deque()
        self.reset()

    def reset(self) -> None:
        self.stats: dict[str, Any] = {
            "requests": 0,
            "answered": 0,
            "rate_limited": 0,
            "errors": 0,
            "kinds": {},
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "max_in_flight": 0,
            "first_at": None,
            "last_at": None,
        }
        self.trace: list[tuple[float, float, float]] = []  # (arrived, served from, answered) as time.time()
        self.rejections: list[tuple[float, float]] = []  # (time.time(), Retry-After given) of each 429
        self._in_flight = 0

    # -- HTTP ------------------------------------------------------------------

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.base_events.Server:
        if self.capacity:
            self._slots = asyncio.Semaphore(self.capacity)
        return await asyncio.start_server(self._connection, host, port, backlog=1024, limit=2**22)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                method, path, _ = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                status, extra, payload = await self._handle(method, path.split("?", 1)[0], body)
                data = json.dumps(payload).encode()
                head = [
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}",
                    "content-type: application/json",
                    f"content-length: {len(data)}",
                    *(f"{k}: {v}" for k, v in extra.items()),
                ]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def _handle(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], Any]:
        if method == "GET" and path == "/stats":
            return 200, {}, self.stats
        if method == "GET" and path == "/trace":
            return 200, {}, self.trace
        if method == "GET" and path == "/rejections":
            return 200, {}, self.rejections
        if method == "POST" and path == "/reset":
            self.reset()
            return 200, {}, {"ok": True}
        if method == "GET" and path in ("/health", "/v1/models"):
            return 200, {}, {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        if method == "POST" and path.endswith("/chat/completions"):
            return await self._chat(body)
        if method == "POST" and path.endswith("/embeddings"):
            return await self._embeddings(body)
        return 404, {}, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}

    async def _chat(self, body: bytes) -> tuple[int, dict[str, str], Any]:
        now = time.monotonic()
        stats = self.stats
        stats["requests"] += 1
        stats["first_at"] = stats["first_at"] or time.time()
        if self.rate_limit:
            window = self._accepted
            while window and window[0] <= now - 1.0:
                window.popleft()
            if len(window) >= self.rate_limit:
                wait = window[0] + 1.0 - now
                stats["rate_limited"] += 1
                self.rejections.append((time.time(), wait))
                headers = {
                    "retry-after": str(max(1, math.ceil(wait))),
                    "retry-after-ms": str(max(1, round(wait * 1000))),
                }
                return (
                    429,
                    headers,
                    {
                        "error": {
                            "message": f"Rate limit reached: {self.rate_limit:g} requests per second",
                            "type": "requests",
                            "code": "rate_limit_exceeded",
                        }
                    },
                )
            window.append(now)
        try:
            request = json.loads(body)
            prompt = request["messages"][-1]["content"]
            if isinstance(prompt, list):  # content parts
                prompt = "".join(part.get("text", "") for part in prompt if isinstance(part, dict))
            kind = promptfoo_grader.kind(prompt)
            if kind is not None:  # promptfoo's grader prompts (benchmarks/peers.py)
                content = promptfoo_grader.answer(prompt)
            else:
                kind = self.policy.kind(prompt)
                content = json.dumps(self.policy.answer(prompt))
        except (UnknownPrompt, KeyError, ValueError, SyntaxError) as exc:
            stats["errors"] += 1
            return (
                400,
                {},
                {
                    "error": {
                        "message": f"simulated judge: {type(exc).__name__}: {exc}"[:500],
                        "type": "invalid_request_error",
                    }
                },
            )
        stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1
        arrived = time.time()
        if self._slots is not None:
            await self._slots.acquire()
        served = time.time()
        self._in_flight += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], self._in_flight)
        try:
            await asyncio.sleep(self.latency_s)
        finally:
            self._in_flight -= 1
            if self._slots is not None:
                self._slots.release()
        stats["answered"] += 1
        stats["prompt_tokens"] += len(prompt) // 4
        stats["completion_tokens"] += max(1, len(content) // 4)
        stats["last_at"] = time.time()
        self.trace.append((arrived, served, stats["last_at"]))
        return (
            200,
            {},
            {
                "id": f"chatcmpl-sim{stats['answered']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": content, "refusal": None},
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt) // 4,
                    "completion_tokens": max(1, len(content) // 4),
                    "total_tokens": len(prompt) // 4 + max(1, len(content) // 4),
                },
            },
        )

    async def _embeddings(self, body: bytes) -> tuple[int, dict[str, str], Any]:
        """OpenAI's embeddings endpoint (promptfoo's answer-relevance): a quarter of a chat call's latency."""
        stats = self.stats
        stats["requests"] += 1
        try:
            request = json.loads(body)
            texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
            vectors = [promptfoo_grader.embedding(str(text)) for text in texts]
        except (KeyError, ValueError, TypeError) as exc:
            stats["errors"] += 1
            return (
                400,
                {},
                {
                    "error": {
                        "message": f"simulated judge: {type(exc).__name__}: {exc}"[:500],
                        "type": "invalid_request_error",
                    }
                },
            )
        if self._slots is not None:
            await self._slots.acquire()
        try:
            await asyncio.sleep(self.latency_s / 4)
        finally:
            if self._slots is not None:
                self._slots.release()
        stats["embeddings"] = stats.get("embeddings", 0) + 1
        tokens = sum(len(str(t)) // 4 for t in texts)
        return (
            200,
            {},
            {
                "object": "list",
                "model": request.get("model", "text-embedding-3-small"),
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


class JudgeProcess:
    """The simulator in a child process: `with JudgeProcess(latency_s=0.2) as judge: judge.base_url`."""

    def __init__(
        self,
        *,
        latency_s: float = 0.2,
        capacity: int | None = None,
        rate_limit: float | None = None,
        startup_timeout_s: float = 30.0,
        flip: float = 0.0,
        seed: int = 0,
    ):
        self.args = ["--latency", str(latency_s)]
        if flip:
            self.args += ["--flip", str(flip), "--seed", str(seed)]
        if capacity:
            self.args += ["--capacity", str(capacity)]
        if rate_limit:
            self.args += ["--rate-limit", str(rate_limit)]
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> JudgeProcess:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.simulated_judge", *self.args],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + self.startup_timeout_s
        line = ""
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if line.startswith("PORT ") or not line:
                break
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"simulated judge did not start (got {line!r})")
        self.port = int(line.split()[1])
        return self

    def _call(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            self.url + path, method=method, data=b"" if method == "POST" else None
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        return self._call("GET", "/stats")

    def trace(self) -> list[tuple[float, float, float]]:
        """(arrived, served from, answered) of every answered request, as time.time()."""
        return [tuple(t) for t in self._call("GET", "/trace")]

    def reset(self) -> None:
        self._call("POST", "/reset")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.simulated_judge", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answered request")
    parser.add_argument("--capacity", type=int, default=None, help="requests served at once (others queue)")
    parser.add_argument(
        "--rate-limit", type=float, default=None, help="accepted requests per second; 429 past it"
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--flip", type=float, default=0.0, help="share of verdicts flipped at random (judge noise)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the flips")
    args = parser.parse_args(argv)

    async def run() -> None:
        judge = SimulatedOpenAIJudge(
            latency_s=args.latency,
            capacity=args.capacity,
            rate_limit=args.rate_limit,
            flip=args.flip,
            seed=args.seed,
        )
        server = await judge.serve(port=args.port)
        print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
        async with server:
            await server.serve_forever()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
