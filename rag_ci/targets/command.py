"""`kind: command`: long-lived subprocesses speaking JSON lines on stdin/stdout.

Each process answers one request at a time (replies carry no id to match them
by), so concurrency comes from `processes` workers. A worker whose process dies,
or that is abandoned mid-request by a time-out, is restarted for the next
question: the stream would otherwise be out of step with the requests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.processes import OutputTail, finish_reader, target_process_kwargs, terminate

_LINE_LIMIT = 64 * 1024 * 1024  # replies with many contexts can be long


class _Worker:
    def __init__(self, target: "CommandTarget", index: int):
        self.target = target
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

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
        self._stderr_task = asyncio.create_task(self.target.stderr.follow(self.process.stderr))

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if not self.alive:
            await self.target.restart(self)
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))
            await process.stdin.drain()
            line = await process.stdout.readline()
        except (BrokenPipeError, ConnectionResetError):
            line = b""
        except asyncio.CancelledError:
            # Abandoned mid-request (time-out): its reply would answer the next question.
            await self.kill()
            raise
        except ValueError as exc:  # line longer than the limit
            await self.kill()
            raise TargetError(f"malformed response: {exc}") from exc
        if not line:
            code = await self._exit_code()
            raise TargetError(f"target process exited (code {code}) while answering; last stderr: {self.target.stderr.text(5)!r}")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise TargetError(f"malformed response: not a JSON line: {line[:200].decode('utf-8', 'replace')!r}") from None

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
        await self._drain_stderr()

    async def stop(self) -> None:
        if self.process is not None and self.process.stdin is not None and self.alive:
            self.process.stdin.close()  # lets a well-behaved server exit on EOF
            try:
                await asyncio.wait_for(self.process.wait(), 2)
            except asyncio.TimeoutError:
                await terminate(self.process)
        await self._drain_stderr()

    async def _drain_stderr(self) -> None:
        await finish_reader(self._stderr_task)
        self._stderr_task = None


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
        self.max_parallel = processes
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()

    async def start(self) -> None:
        for worker in self._workers:
            await worker.launch()
            self._idle.put_nowait(worker)
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
        await worker.launch()

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
