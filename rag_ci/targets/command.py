"""`kind: command`: long-lived subprocesses speaking JSON lines on stdin/stdout.

Each process answers one request at a time, so concurrency comes from `processes`
workers. A reply is matched to its request: by `id` when the reply carries one,
otherwise by strict lock-step. Any stdout line that is not the one reply to the
request in flight (a log line, a second reply, a reply for another id) errors the
question it was read for and restarts the process: a line left in the stream
would otherwise answer the next question, and every later answer would be
shifted by one. A process that dies, or that is abandoned mid-request by a
time-out, is restarted for the next question for the same reason.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.processes import OutputTail, finish_reader, target_process_kwargs, terminate

_LINE_LIMIT = 64 * 1024 * 1024  # replies with many contexts can be long
_EOF = b""
STDOUT_RULE = "stdout is for replies only: write logs to stderr"


class _Lines:
    """Lines a process wrote to stdout, read as they arrive (so a stray one can be seen
    before the next request goes out). `b""` marks the end of the stream."""

    def __init__(self) -> None:
        self._items: deque[bytes | ValueError] = deque()
        self._arrived = asyncio.Event()

    def put(self, item: bytes | ValueError) -> None:
        self._items.append(item)
        self._arrived.set()

    async def get(self) -> bytes | ValueError:
        while not self._items:
            self._arrived.clear()
            await self._arrived.wait()
        return self._items.popleft()

    def stray(self) -> bytes | ValueError | None:
        """The first pending line that is not the end of the stream, if any."""
        return next((item for item in self._items if item != _EOF), None)

    def ended(self) -> bool:
        return _EOF in self._items

    async def follow(self, stream: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await stream.readline()
                self.put(line)
                if not line:
                    return
        except ValueError as exc:  # a line longer than the limit
            self.put(exc)


def _shown(line: bytes | ValueError) -> str:
    if isinstance(line, ValueError):
        return f"a line longer than {_LINE_LIMIT} bytes"
    return repr(line[:200].decode("utf-8", "replace").rstrip("\n"))


class _Worker:
    def __init__(self, target: "CommandTarget", index: int):
        self.target = target
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self.lines = _Lines()
        self.last_id: str | None = None  # the question the previous reply answered
        self._stderr_task: asyncio.Task[None] | None = None
        self._stdout_task: asyncio.Task[None] | None = None

    async def launch(self) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.target.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.target.cwd,
                limit=_LINE_LIMIT,
                **self.target.process_kwargs,
            )
        except OSError as exc:
            raise RagCiError(f"cannot start target command {self.target.command}: {exc}") from exc
        assert self.process.stdout is not None
        self.lines = _Lines()
        self.last_id = None
        self._stderr_task = asyncio.create_task(self.target.stderr.follow(self.process.stderr))
        self._stdout_task = asyncio.create_task(self.lines.follow(self.process.stdout))
        await self.target.handshake(self)

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self._ask(request)
        except asyncio.CancelledError:
            # Abandoned mid-request (time-out): its reply would answer the next question.
            await self.kill()
            raise

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        stray = self.lines.stray()
        if stray is not None:
            # Arrived after the previous reply was taken: in lock-step it would be read as this
            # question's reply. This question is not sent; the next one gets a clean process.
            await self.kill()
            when = f"after its reply to {self.last_id}" if self.last_id else "before the first request"
            raise TargetError(
                f"malformed response: the target wrote a stdout line {when}: {_shown(stray)}; "
                f"this question was not sent and the process is restarted ({STDOUT_RULE})"
            )
        if self.process is None or self.process.returncode is not None or self.lines.ended():
            await self.target.restart(self)
        process = self.process
        assert process is not None and process.stdin is not None
        try:
            process.stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the process is gone: its end of stdout says so below
        line = await self.lines.get()
        if isinstance(line, ValueError):
            await self.kill()
            raise TargetError(f"malformed response: {line}")
        if line == _EOF:
            code = await self._exit_code()
            raise TargetError(f"target process exited (code {code}) while answering; last stderr: {self.target.stderr.text(5)!r}")
        reply, problem = self._decode(line, request["id"])
        if problem is None:
            # A reply written twice usually arrives in the same read: give the reader one turn.
            await asyncio.sleep(0)
            extra = self.lines.stray()
            if extra is not None:
                problem = f"the target wrote more than one stdout line for one request (next: {_shown(extra)})"
        if problem is not None:
            await self.kill()
            raise TargetError(f"malformed response: {problem}; the process is restarted ({STDOUT_RULE})")
        self.last_id = request["id"]
        return reply

    def _decode(self, line: bytes, request_id: str) -> tuple[dict[str, Any], str | None]:
        """The reply, or why this line is not the reply to `request_id`."""
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}, f"not a JSON line: {_shown(line)}"
        if not isinstance(reply, dict) or not self.target.looks_like_reply(reply):
            return {}, f"not a reply: {_shown(line)}"
        if "id" in reply and reply["id"] != request_id:
            return {}, f"reply for id {str(reply['id'])[:80]!r} while {request_id!r} was asked"
        return reply, None

    async def _exit_code(self) -> int | None:
        assert self.process is not None
        try:
            return await asyncio.wait_for(self.process.wait(), 2)
        except asyncio.TimeoutError:
            await self.kill()
            return None

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        await self._drain_output()
        self.lines = _Lines()  # what a killed process still wrote answers nothing

    async def stop(self) -> None:
        if self.process is not None and self.process.stdin is not None and self.process.returncode is None:
            self.process.stdin.close()  # lets a well-behaved server exit on EOF
            try:
                await asyncio.wait_for(self.process.wait(), 2)
            except asyncio.TimeoutError:
                await terminate(self.process)
        await self._drain_output()

    async def _drain_output(self) -> None:
        await finish_reader(self._stderr_task)
        await finish_reader(self._stdout_task)
        self._stderr_task = self._stdout_task = None


class CommandTarget:
    def __init__(self, command: list[str], *, cwd: Path, env: dict[str, str] | None = None, processes: int = 1, restart_limit: int = 10):
        self.command = list(command)
        self.cwd = cwd
        self.process_kwargs = target_process_kwargs(env)  # env (allow-listed), and user under root
        self.restart_limit = restart_limit
        self.restarts = 0
        self.startup_grace_s = 0.5
        self.stderr = OutputTail()
        self._workers = [_Worker(self, i) for i in range(processes)]
        # The engine sends no more than this at once, so latency excludes queueing for a worker.
        self.max_parallel: int | None = processes
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()

    def looks_like_reply(self, reply: dict[str, Any]) -> bool:
        """A JSON object that answers (or refuses to): anything else on stdout is a stray line."""
        return "answer" in reply or "error" in reply

    async def handshake(self, worker: _Worker) -> None:
        """Wait until a just-launched process is ready. The protocol has no ready line."""

    async def start(self) -> None:
        try:
            await asyncio.gather(*(worker.launch() for worker in self._workers))
        except BaseException:
            await self.stop()
            raise
        for worker in self._workers:
            self._idle.put_nowait(worker)
        if self.startup_grace_s <= 0:
            return
        # A command that dies at once (bad path, import error) is a start-up failure, not N question errors.
        first = self._workers[0].process
        assert first is not None
        try:
            code = await asyncio.wait_for(first.wait(), self.startup_grace_s)
        except asyncio.TimeoutError:
            return
        else:
            await self.stop()
            raise RagCiError(f"target command exited at start (code {code}): {' '.join(self.command)}\n{self.stderr.text(20)}")

    async def restart(self, worker: _Worker) -> None:
        if self.restarts >= self.restart_limit:
            raise TargetError(f"target process died {self.restarts} times; not restarting again")
        self.restarts += 1
        self.stderr.add(f"[rag-ci] restarting target process (restart {self.restarts})")
        await worker.kill()
        try:
            await worker.launch()
        except RagCiError as exc:  # mid-run, a process that cannot start fails its question
            await worker.kill()
            raise TargetError(str(exc)) from None

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        worker = await self._idle.get()
        try:
            return await worker.ask(request)
        finally:
            self._idle.put_nowait(worker)

    async def stop(self) -> None:
        await asyncio.gather(*(w.stop() for w in self._workers), return_exceptions=True)

    def diagnostics(self) -> str:
        return self.stderr.text()
