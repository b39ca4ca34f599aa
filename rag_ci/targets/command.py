"""`kind: command`: long-lived subprocesses speaking JSON lines on stdin/stdout.

A reply is matched to its request: by `id` when the reply carries one, otherwise by
strict lock-step. Once a reply carried its id, every reply must, and each process gets many
requests at once, matched by id (by_id.py): nothing depends on timing there. Until then (and
for ever, for a target without ids) each process answers one request at a time, so
concurrency comes from `processes` workers. Any stdout line that is not the one reply to the
request in flight (a log line, a second reply, a reply for another id, a line written at
start) errors the question it was read for and restarts the process: a line left in the
stream would otherwise answer the next question, and every later answer would be
shifted by one. A process that dies, or (in lock-step) that is abandoned mid-request by
a time-out, is restarted for the next question for the same reason; by id, a time-out
leaves the process to its other requests unless it answered nothing meanwhile (by_id.py).

Lock-step has no end-of-reply marker, so two rules make what a question gets independent
of timing: after each reply without id rag-ci waits `settle_s` for a second line (a reply
printed twice in two writes lands within it: it errors its own question, never the next
one, and is never read as the next question's reply), and after every (re)start
`startup_grace_s` for lines written at start. Looking only at what had arrived (no wait)
was tried: the second write often came a scheduling slice later and was read as the next
answer. Ids make the wait unnecessary, which is why docs/targets.md recommends them.

Each process is the leader of its own process group, killed as a whole: a child that
keeps stdout open after its parent died would otherwise hold the pipes (and the run's
end) open; once the process itself has exited its pipes are closed.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.base import ArrivedReply, wrong_id
from rag_ci.targets.by_id import RepliesById, ask_by_id
from rag_ci.targets.processes import OutputTail, finish_reader, permission_hint, target_process_kwargs
from rag_ci.targets.reply_clock import reply_arrived
from rag_ci.targets.reply_json import OFF_LOOP_BYTES, reply_bounds_problem
from rag_ci.targets.stdout_lines import _EOF, LINE_LIMIT, STDOUT_RULE, _Lines, shown

SETTLE_S = 0.02  # lock-step without ids: a second write of a reply lands within this
EXIT_POLL_S = 0.05
ORPHAN_GRACE_S = 0.5  # after the process exited, for the reader to take what is still in the pipe


def _kill_group(process: asyncio.subprocess.Process, sig: int = signal.SIGKILL) -> None:
    """The process and every process it started that did not leave its group."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Until asyncio's child watcher has reaped the process (`process.wait()` waits for the
    pipes too, which a child of the process may keep open for ever)."""
    while process.returncode is None:
        await asyncio.sleep(EXIT_POLL_S)


def _close_pipes(process: asyncio.subprocess.Process) -> None:
    # asyncio's Process has no public close; without it a pipe held open by an orphan is
    # closed by the transport's __del__ after the loop is gone (a traceback at exit).
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


class _Worker:
    def __init__(self, target: CommandTarget, index: int):
        self.target = target
        self.index = index
        self.process: asyncio.subprocess.Process | None = None
        self.lines = _Lines()
        # Its own stderr, since its launch: an error quotes its crash once, not the lines of the
        # process it replaced nor of another copy (the target's tail has them all, for diagnostics).
        self.stderr = OutputTail()
        self.exited = asyncio.Event()
        self.last_id: str | None = None  # the question the previous reply answered
        self._tasks: list[asyncio.Task[None]] = []
        self.reading = asyncio.Lock()  # one lock-step request at a time; by_id waits for it at the switch
        self.replies: RepliesById | None = None  # requests in flight by id, once the target sends ids
        self.stale = False  # a stray line was seen by id: the next request restarts the process

    async def launch(self) -> None:
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.target.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.target.cwd,
                limit=LINE_LIMIT,
                start_new_session=True,  # its own process group: see _kill_group
                **self.target.process_kwargs,
            )
        except OSError as exc:
            hint = (
                permission_hint(project_dir=self.target.cwd)
                if exc.errno in (errno.EACCES, errno.EPERM)
                else ""
            )
            raise RagCiError(f"cannot start target command {self.target.command}: {exc}{hint}") from exc
        assert self.process.stdout is not None
        self.lines = _Lines()
        self.exited = asyncio.Event()
        self.last_id = None
        self.stale = False
        self.replies = None
        self.stderr = OutputTail()
        readers = [
            asyncio.create_task(self.stderr.follow(self.process.stderr, also=self.target.stderr)),
            asyncio.create_task(self.lines.follow(self.process.stdout)),
        ]
        self._tasks = [*readers, asyncio.create_task(self._watch_exit(self.process, readers))]
        await self.target.handshake(self)

    async def _watch_exit(
        self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]
    ) -> None:
        """Mark the exit; then end the output once it has been read (see _reaped)."""
        await _reaped(process)
        self.exited.set()
        await asyncio.wait(readers, timeout=ORPHAN_GRACE_S)
        _close_pipes(process)

    def needs_start(self) -> bool:
        return self.process is None or self.process.returncode is not None or self.lines.ended() or self.stale

    async def ask(self, request: dict[str, Any]) -> dict[str, Any] | ArrivedReply:
        try:
            async with self.reading:
                return await self._ask(request)
        except asyncio.CancelledError:
            # Abandoned mid-request (time-out): its reply would answer the next question.
            await self.kill()
            raise

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any] | ArrivedReply:
        if self.needs_start():
            await self.target.restart(self)
        stray = self.lines.stray()
        if stray is not None:
            # Arrived after the previous reply was taken (or at start): in lock-step it would be read
            # as this question's reply. This question is not sent; the next one gets a clean process.
            await self.kill()
            when = f"after its reply to {self.last_id}" if self.last_id else "at start, before any request"
            raise TargetError(
                f"malformed response: the target wrote a stdout line {when}: {shown(stray)}; "
                f"this question was not sent and the process is restarted ({STDOUT_RULE})"
            )
        await self._send(request)
        line = await self.lines.get()
        # a wait for a pending line below is rag-ci's check, not the target's latency
        arrived_at = time.perf_counter()
        reply_arrived()  # in lock-step this line decides the question: checking it is rag-ci's time
        await self._refuse_unreadable(line)
        assert isinstance(line, bytes)
        # A long line is checked and parsed in a worker thread: the event loop keeps serving the other workers.
        reply, problem = (
            await asyncio.to_thread(self._decode, line, request["id"])
            if len(line) > OFF_LOOP_BYTES
            else self._decode(line, request["id"])
        )
        if problem is None and "id" not in reply:
            # A reply written twice: seen now, it errors this question; seen at the next request,
            # it would error that one instead. A reply with its id needs no wait: from now on the
            # process is asked by id (by_id.py), and a second reply for this id is caught whenever it comes.
            extra = await self._second_line()
            if extra is not None:
                problem = f"the target wrote more than one stdout line for one request (next: {shown(extra)})"
        if problem is not None:
            await self.kill()
            raise TargetError(f"malformed response: {problem}; the process is restarted ({STDOUT_RULE})")
        if "id" in reply:
            self.target.sends_ids = True
        self.last_id = request["id"]
        return ArrivedReply(reply, arrived_at)

    async def _second_line(self) -> bytes | ValueError | None:
        """A line that followed the reply (lock-step without ids): the lines already read, then
        whatever arrives within `settle_s`. A duplicate written in a second write can come a
        scheduling slice after the first: looking only at what is already there (no wait) let
        it be read as the next question's reply. Replies with ids need no such wait (by_id.py)."""
        await self.lines.wait_for_more(self.target.settle_s)
        await asyncio.sleep(0)
        return self.lines.stray()

    async def exit_code_or_none(self, wait_s: float = 2.0) -> int | None:
        """The exit code once the process has exited (None if it has not within `wait_s`)."""
        try:
            await asyncio.wait_for(self.exited.wait(), wait_s)
        except TimeoutError:
            return None
        return self.process.returncode if self.process is not None else None

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the process is gone: its end of stdout says so

    async def _refuse_unreadable(self, line: bytes | ValueError) -> None:
        """A line too long to read, or the end of the stream, ends this question."""
        if isinstance(line, ValueError):
            await self.kill()
            raise TargetError(f"malformed response: {line}")
        if line == _EOF:
            code = await self._exit_code()
            raise TargetError(
                f"target process exited (code {code}) while answering; last stderr: {self.stderr.text(5)!r}"
            )

    def _decode(self, line: bytes, request_id: str) -> tuple[dict[str, Any], str | None]:
        """The reply, or why this line is not the reply to `request_id`."""
        # before parsing: 200,000 `[` made json.loads raise RecursionError
        problem = reply_bounds_problem(line)
        if problem is not None:
            return {}, problem
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}, f"not a JSON line: {shown(line)}"
        if not isinstance(reply, dict) or not self.target.looks_like_reply(reply):
            return {}, f"not a reply: {shown(line)}"
        if "id" in reply and reply["id"] != request_id:
            return {}, wrong_id(reply["id"], request_id)
        if "id" not in reply and self.target.sends_ids:
            return {}, f"a reply without `id` from a target whose replies carry it: {shown(line)}"
        return reply, None

    async def _exit_code(self) -> int | None:
        try:
            await asyncio.wait_for(self.exited.wait(), 2)
        except TimeoutError:
            await self.kill()
            return None
        assert self.process is not None
        return self.process.returncode

    async def kill(self, error: TargetError | None = None) -> None:
        """Kill the process (and its group); requests in flight by id fail with `error`."""
        replies, self.replies, self.stale = self.replies, None, False
        if replies is not None:
            replies.close(
                error or TargetError("the target process was restarted while this request was in flight")
            )
        process = self.process
        if process is not None:
            _kill_group(process)
            try:  # reaped before closing: closing a live process's transport reaps it under the watcher's feet
                await asyncio.wait_for(_reaped(process), 5)
            except TimeoutError:
                pass  # not ours to kill (it changed user): stop reading it all the same
            _close_pipes(process)
            if process.returncode is not None:
                await process.wait()
        await self._finish_tasks()
        self.lines = _Lines()  # what a killed process still wrote answers nothing

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.stdin is not None and process.returncode is None:
            process.stdin.close()  # lets a well-behaved server exit on EOF
            for sig, grace_s in ((None, 2.0), (signal.SIGTERM, 3.0)):
                if sig is not None:
                    _kill_group(process, sig)
                try:
                    await asyncio.wait_for(self.exited.wait(), grace_s)
                    break
                except TimeoutError:
                    continue
        await self.kill()  # what is left of its group, and the pipes

    async def _finish_tasks(self) -> None:
        readers, watcher = self._tasks[:2], self._tasks[2:]
        for task in readers:
            await finish_reader(task)
        for task in watcher:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._tasks = []


RESTART_NOTE = "[rag-ci] restarting target process"


def _load(worker: _Worker) -> int:
    return len(worker.replies.waiting) if worker.replies is not None else 0


class CommandTarget:
    worker_class: type[_Worker] = _Worker

    def __init__(
        self,
        command: list[str],
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
        processes: int = 1,
        restart_limit: int = 10,
    ):
        self.command = list(command)
        self.cwd = cwd
        # env (allow-listed), and user under root
        self.process_kwargs = target_process_kwargs(env, project_dir=cwd)
        self.restart_limit = restart_limit
        self.restarts = 0
        self.startup_grace_s = 0.5
        self.settle_s = SETTLE_S
        self.sends_ids = False  # once a reply carried its request's id, every reply must
        self.stderr = OutputTail()
        self._workers = [self.worker_class(self, i) for i in range(processes)]
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()

    @property
    def max_parallel(self) -> int | None:
        """In lock-step, one request per process: the engine sends no more, so latency excludes
        queueing for a worker. Once replies carry ids, as many as `target.concurrency`."""
        return None if self.sends_ids else len(self._workers)

    def looks_like_reply(self, reply: dict[str, Any]) -> bool:
        """A JSON object that answers (or refuses to): anything else on stdout is a stray line."""
        return "answer" in reply or "error" in reply

    async def handshake(self, worker: _Worker) -> None:
        """The protocol has no ready line: give a just-started process a moment, so that what it
        writes at start (a banner, a stale reply) is a stray line before the first request, and a
        command that dies at once (bad path, import error) is seen dead."""
        try:
            await asyncio.wait_for(worker.exited.wait(), self.startup_grace_s)
        except TimeoutError:
            pass

    async def start(self) -> None:
        try:
            await asyncio.gather(*(worker.launch() for worker in self._workers))
        except BaseException:
            await self.stop()
            raise
        dead = [
            (w, w.process.returncode) for w in self._workers if w.process and w.process.returncode is not None
        ]
        if dead:
            # A command that dies at once is a start-up failure, not N question errors; its copies
            # die alike: one copy's stderr is quoted, not the same lines once per copy (issue 55).
            await self.stop()
            (first, code), copies = dead[0], f" ({len(dead)} of {len(self._workers)} processes)"
            stderr = first.stderr.text(20)
            hint = permission_hint(stderr, project_dir=self.cwd)
            raise RagCiError(
                f"target command exited at start (code {code}): {' '.join(self.command)}"
                f"{copies if len(self._workers) > 1 else ''}\n{stderr}{hint}"
            )
        for worker in self._workers:
            self._idle.put_nowait(worker)

    async def restart(self, worker: _Worker) -> None:
        if self.restarts >= self.restart_limit:
            raise TargetError(f"target process died {self.restarts} times; not restarting again")
        self.restarts += 1
        self.stderr.add(f"{RESTART_NOTE} (restart {self.restarts})")
        await worker.kill()
        try:
            await worker.launch()
        except RagCiError as exc:  # mid-run, a process that cannot start fails its question
            await worker.kill()
            raise TargetError(str(exc)) from None

    async def query(self, request: dict[str, Any]) -> dict[str, Any] | ArrivedReply:
        if self.sends_ids:
            return await ask_by_id(min(self._workers, key=_load), request)
        worker = await self._idle.get()
        try:
            if self.sends_ids:  # the target's first id arrived while this request waited for a process
                return await ask_by_id(worker, request)
            return await worker.ask(request)
        finally:
            self._idle.put_nowait(worker)

    async def stop(self) -> None:
        await asyncio.gather(*(w.stop() for w in self._workers), return_exceptions=True)

    def diagnostics(self) -> str:
        return self.stderr.text()
