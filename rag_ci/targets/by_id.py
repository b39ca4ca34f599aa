"""A `kind: command` process whose replies carry ids: many requests in flight, each reply matched by its id.

Once a target's reply carried its request's `id`, every reply must (command.py). From then
on nothing needs timing: a line is the reply of the request in flight that it names, or it
is a stray line, whenever it arrives. So a process gets up to `concurrency` requests at
once without waiting for each reply, and no wait follows a reply (lock-step needs one,
command.py). A stray line — no `id`, an id that is not in flight (never asked, asked of
another process, or already answered: a reply written twice), not a reply at all — errors
every request in flight on that process and restarts it, as in lock-step; one that arrives
while nothing is in flight errors the next request (not sent), naming the line. A request
that times out is abandoned, not its process: its late reply is recognised by its id and
dropped, unless the process answered nothing at all meanwhile (stuck: restarted).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from typing import Any, Protocol, Self, TypeVar

from rag_ci.errors import TargetError
from rag_ci.targets.base import ArrivedReply, another_type_of, shown_id
from rag_ci.targets.processes import OutputTail
from rag_ci.targets.reply_json import reply_bounds_problem
from rag_ci.targets.stdout_lines import _EOF, STDOUT_RULE, _Lines, shown

RECENT_IDS = 4096  # ids answered lately, so that a second reply for one is named as such

_W = TypeVar("_W", contravariant=True)


class _TargetParts(Protocol[_W]):
    """What asking by id uses of the worker's target (command.py's CommandTarget), which
    restarts a worker of its own kind (`_W`)."""

    @property
    def stderr(self) -> OutputTail: ...

    def looks_like_reply(self, reply: dict[str, Any]) -> bool: ...

    async def restart(self, worker: _W) -> None: ...


class _WorkerParts(Protocol):
    """The parts of a command target's worker (command.py) that asking by id uses: its process
    and stdout lines, the lock a lock-step request holds, its state, and restarting or killing it.
    A protocol, so that this module never imports command.py (which imports it)."""

    replies: RepliesById | None
    stale: bool

    @property
    def process(self) -> asyncio.subprocess.Process | None: ...

    @property
    def lines(self) -> _Lines: ...

    @property
    def reading(self) -> asyncio.Lock: ...

    @property
    def target(self) -> _TargetParts[Self]: ...

    def needs_start(self) -> bool: ...

    async def kill(self, error: TargetError | None = None) -> None: ...

    async def exit_code_or_none(self, wait_s: float = 2.0) -> int | None: ...


class RepliesById:
    """The requests in flight on one process (one start of it), and the task routing its replies."""

    def __init__(self, worker: _WorkerParts):
        self.worker = worker
        self.waiting: dict[str, asyncio.Future[ArrivedReply]] = {}
        self.answered: deque[str] = deque(maxlen=RECENT_IDS)
        self.abandoned: set[str] = set()  # timed out: a late reply for one answers nothing, and is dropped
        self.last_reply_at = time.perf_counter()
        self.stray: str | None = (
            None  # a stray line seen while nothing was in flight: the next request's error
        )
        self._outbox: list[bytes] = []
        self.task = asyncio.create_task(self._route())

    def post(self, request: dict[str, Any]) -> None:
        """Queue `request` for the process: the requests of one turn of the event loop go out
        in one write (a write per request cost a wake-up of the process each, ~0.3 ms on a
        loaded machine, the largest single cost of a 50,000-question run)."""
        if not self._outbox:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outbox.append((json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8"))

    def _flush(self) -> None:
        data, self._outbox = b"".join(self._outbox), []
        stdin = self.worker.process.stdin if self.worker.process is not None else None
        if stdin is not None and not stdin.is_closing():
            stdin.write(data)  # a few requests: the pipe takes them; a process gone is seen on stdout

    def expect(self, request_id: str) -> asyncio.Future[ArrivedReply]:
        if (
            request_id in self.waiting
        ):  # the engine never asks one id twice at once; a process could not tell them apart
            raise TargetError(f"request {request_id!r} is already in flight on this process")
        future: asyncio.Future[ArrivedReply] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        return future

    def abandon(self, request_id: str) -> None:
        if self.waiting.pop(request_id, None) is not None:
            self.abandoned.add(request_id)

    def fail_all(self, error: TargetError) -> None:
        waiting, self.waiting = self.waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(error)

    def close(self, error: TargetError) -> None:
        """The process is gone (killed or restarted): nothing in flight will be answered."""
        if self.task is not asyncio.current_task():
            self.task.cancel()
        self.fail_all(error)

    async def _route(self) -> None:
        lines = self.worker.lines
        while True:
            line = await lines.get()
            if line == _EOF:
                code = await self.worker.exit_code_or_none()
                self.fail_all(
                    TargetError(
                        f"target process exited (code {code}) while answering; "
                        f"last stderr: {self.worker.target.stderr.text(5)!r}"
                    )
                )
                self.worker.stale = True
                return
            arrived_at = time.perf_counter()
            problem = f"{line}" if isinstance(line, ValueError) else None
            reply = None if isinstance(line, ValueError) else self._reply(line)
            if isinstance(reply, dict):
                self.last_reply_at = arrived_at
                self.answered.append(reply["id"])
                future = self.waiting.pop(reply["id"], None)
                if future is None:  # the late reply of a request that timed out
                    self.abandoned.discard(reply["id"])
                    self.worker.target.stderr.add(
                        f"[rag-ci] dropped the reply to {str(reply['id'])[:80]!r}, which came "
                        "after its time-out"
                    )
                elif not future.done():
                    future.set_result(ArrivedReply(reply, arrived_at))
                continue
            problem = problem or reply or "?"
            self.worker.stale = True  # restarted by the next request to this process
            if self.waiting:
                self.fail_all(
                    TargetError(f"malformed response: {problem}; the process is restarted ({STDOUT_RULE})")
                )
            else:
                self.stray = f"{problem} (arrived while no request was in flight: {shown(line)})"
            return

    def _reply(self, line: bytes) -> dict[str, Any] | str:
        """The reply this line is, or why it is a stray line."""
        # before parsing: 200,000 `[` made json.loads raise RecursionError
        problem = reply_bounds_problem(line)
        if problem is not None:
            return problem
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return f"not a JSON line: {shown(line)}"
        if not isinstance(reply, dict) or not self.worker.target.looks_like_reply(reply):
            return f"not a reply: {shown(line)}"
        if "id" not in reply:
            return f"a reply without `id` from a target whose replies carry it: {shown(line)}"
        request_id = reply["id"]
        if isinstance(request_id, str) and (request_id in self.waiting or request_id in self.abandoned):
            return reply
        if request_id in self.answered:
            return f"a second reply for {shown_id(request_id)}, which was already answered: {shown(line)}"
        asked = next((a for a in self.waiting if another_type_of(request_id, a)), None)
        hint = another_type_of(request_id, asked) if asked is not None else ""
        return f"a reply for id {shown_id(request_id)}, which is not in flight on this process{hint}: {shown(line)}"


async def ask_by_id(worker: _WorkerParts, request: dict[str, Any]) -> ArrivedReply:
    """Send `request` to the worker's process at once and wait for the reply carrying its id."""
    async with worker.reading:  # a lock-step request still in flight at the switch finishes first
        if worker.replies is not None and worker.replies.stray is not None:
            stray = worker.replies.stray
            await worker.kill()
            raise TargetError(
                f"malformed response: the target wrote a stray stdout line: {stray}; this question was not "
                f"sent and the process is restarted ({STDOUT_RULE})"
            )
        if worker.needs_start():
            await worker.target.restart(worker)
        if worker.replies is None:
            early = worker.lines.stray()
            if early is not None:  # written at (re)start, before any request: it must not answer this one
                await worker.kill()
                raise TargetError(
                    f"malformed response: the target wrote a stdout line at start, before any request: "
                    f"{shown(early)}; this question was not sent and the process is restarted ({STDOUT_RULE})"
                )
            worker.replies = RepliesById(worker)
        replies = worker.replies
        future = replies.expect(request["id"])
        replies.post(request)
        sent_at = time.perf_counter()
    try:
        return await future
    except asyncio.CancelledError:
        # Timed out. Its late reply carries its id: it is dropped when it comes, and the process
        # keeps answering the others. Unless the process answered nothing at all since this
        # request went out: then it is stuck, and a fresh one serves the next requests (those in
        # flight on it fail with this error).
        if replies is worker.replies:  # (the wait's cancellation cancelled `future` too)
            replies.abandon(request["id"])
            if replies.last_reply_at < sent_at:
                await worker.kill(
                    TargetError(
                        f"the process was restarted: it answered nothing while request "
                        f"{str(request['id'])[:80]!r}, in flight on it, timed out"
                    )
                )
        raise
