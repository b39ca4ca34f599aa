"""`kind: python`: call `module:function` with the request dict, in worker processes.

The function runs in `python_worker.py`, spoken to like a `kind: command` target,
not in rag-ci's own process: there, `SystemExit(0)` would end rag-ci with exit 0
and no results, and a hung call would keep it alive for ever (a thread cannot be cancelled). In a worker, every
exception is that question's error and `timeout_s` kills and restarts the worker; the
import of the entry gets `timeout_s` too. Concurrency is `processes` workers, each importing
the entry once. Replies are matched to requests by a random nonce (see _PythonWorker).

The worker needs only the standard library, so any Python 3 can run it, and the
interpreter decides which packages the user's module imports (`worker_interpreter`):
`target.python` when set; else, in rag-ci's image, the RAG's own virtual environment
(targets/venv.py), so a RAG pinning pydantic<2 imports pydantic 1 while rag-ci keeps
pydantic 2; else the interpreter running rag-ci, as a leading `python` in a command.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.command import _EOF, CommandTarget, _Worker, shown
from rag_ci.targets.processes import permission_hint
from rag_ci.targets.reply_clock import reply_arrived
from rag_ci.targets.reply_json import OFF_LOOP_BYTES, reply_bounds_problem
from rag_ci.targets.venv import target_venv_dir

WORKER = Path(__file__).with_name("python_worker.py")


def worker_interpreter(
    setting: str | None, root: Path, target_path: str, environ: Mapping[str, str] | None = None
) -> str:
    """The python the worker runs with (see the module docstring).

    A setting with a slash is a path, relative to the config's folder; a bare name is
    looked up on the target's PATH (in the image, `python` is the RAG's venv). A venv's
    `bin/python` is a symbolic link whose *name* selects the venv: it is never resolved.
    """
    environ = os.environ if environ is None else environ
    if setting is None:
        venv = target_venv_dir(environ)
        return str(venv / "bin" / "python") if venv is not None else sys.executable
    if "/" in setting:
        candidate = root / setting
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        raise RagCiError(
            f"target.python: {setting} is not an executable file ({candidate} does not exist or cannot run); "
            'make the venv in a build step, e.g. build: ["python3 -m venv .venv-rag", ...]'
        )
    found = shutil.which(setting, path=target_path)
    if found is None:
        raise RagCiError(f"target.python: no {setting} on the target's PATH ({target_path})")
    return found


def _well_formed(message: dict[str, Any]) -> bool:
    """The worker's reply message: its nonce and either the reply or what was raised (text)."""
    keys = set(message)
    return keys == {"nonce", "reply"} or (keys == {"nonce", "raised"} and isinstance(message["raised"], str))


class _PythonWorker(_Worker):
    """Speaks the worker's protocol (python_worker.py): each request goes out with a fresh
    random nonce, and only the line carrying it is its reply. A line without it (a forgery
    by the user's code, or a second reply to an earlier request) answers nothing: it is
    dropped and noted, whatever moment it arrives at."""

    target: PythonTarget

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.needs_start():
            await self.target.restart(self)
        for line in self.lines.take_pending():
            self.target.dropped(line)
        nonce = secrets.token_hex(16)
        await self._send({"nonce": nonce, "request": request})
        while True:
            line = await self.lines.get()
            await self._refuse_unreadable(line)
            assert isinstance(line, bytes)
            if nonce.encode() in line:  # the line that decides this request (below): the time-out stops
                reply_arrived()
            # Bounded before parsing (a reply 200,000 deep is no RecursionError here); a long line
            # in a worker thread, so that the event loop keeps serving the other workers.
            message, problem = (
                await asyncio.to_thread(_message, line) if len(line) > OFF_LOOP_BYTES else _message(line)
            )
            if (
                isinstance(message, dict)
                and message.get("nonce") == nonce
                and ("reply" in message or "raised" in message)
            ):
                if not _well_formed(message):
                    await self.kill()
                    raise TargetError(
                        "malformed response: the worker's message for this request is not of its protocol's "
                        f"shape (the module may have replaced the worker's parts): {shown(line)}; the process is restarted"
                    )
                self.last_id = request["id"]
                return message
            if nonce.encode() in line and problem:
                await self.kill()
                raise TargetError(f"malformed response: {problem}; the process is restarted")
            if nonce.encode() in line:
                await self.kill()
                raise TargetError(
                    "malformed response: the worker's reply was mixed with other output written on its "
                    f"reply channel: {shown(line)}; the process is restarted"
                )
            self.target.dropped(line)


class PythonTarget(CommandTarget):
    worker_class = _PythonWorker

    def __init__(
        self,
        entry: str,
        *,
        search_path: list[Path],
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        processes: int = 1,
        restart_limit: int = 10,
        python: str | None = None,
        root: Path | None = None,
        import_timeout_s: float = 60.0,
    ):
        # The working folder stays rag-ci's own, as when the function ran in-process.
        worker = [str(WORKER), entry, *(str(folder) for folder in search_path)]
        super().__init__(
            [sys.executable, *worker],
            cwd=cwd or Path.cwd(),
            env=env,
            processes=processes,
            restart_limit=restart_limit,
        )
        # After the allow-listed environment exists: in the image, making it made the RAG's venv.
        self.command = [
            worker_interpreter(
                python, root or Path.cwd(), self.process_kwargs["env"].get("PATH", os.defpath)
            ),
            *worker,
        ]
        self.entry = entry
        self.startup_grace_s = 0  # the worker says when it is ready (or why not)
        self.import_timeout_s = (
            import_timeout_s  # `timeout_s`: an import that never ends must not hang the run
        )

    def dropped(self, line: bytes | ValueError) -> None:
        self.stderr.add(
            f"[rag-ci] dropped a line on the python worker's reply channel that answers no request in flight: {shown(line)}"
        )

    async def handshake(self, worker: _Worker) -> None:
        """Wait for the worker to import the entry, within `timeout_s`."""
        try:
            ready = await asyncio.wait_for(self._ready(worker), self.import_timeout_s)
        except TimeoutError:
            await worker.kill()
            raise RagCiError(
                f"target entry {self.entry}: importing it took longer than target.timeout_s "
                f"({self.import_timeout_s:g}s); the worker was stopped\n{self.stderr.text(20)}".rstrip()
            ) from None
        if isinstance(ready, dict) and ready.get("ready") is True:
            return
        await worker.kill()
        if isinstance(ready, dict) and ready.get("error"):
            raise RagCiError(f"{ready['error']}\n{self.stderr.text(20)}".rstrip())
        code = worker.process.returncode if worker.process is not None else None
        stderr = self.stderr.text(20)
        raise RagCiError(
            f"target entry {self.entry}: the python worker did not start (code {code})\n{stderr}".rstrip()
            + permission_hint(stderr, project_dir=self.cwd)
        )

    async def _ready(self, worker: _Worker) -> dict[str, Any] | None:
        """The worker's first message; lines before it (the module writing on the channel) are dropped."""
        while True:
            line = await worker.lines.get()
            if line == _EOF:
                return None
            try:
                message = (
                    json.loads(line) if isinstance(line, bytes) and not reply_bounds_problem(line) else None
                )
            except (json.JSONDecodeError, UnicodeDecodeError):
                message = None
            if isinstance(message, dict) and "ready" in message:
                return message
            self.dropped(line)

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        message = await super().query(request)
        # the worker's own message (_PythonWorker._ask): no settle wait, no ArrivedReply
        assert isinstance(message, dict)
        if "raised" in message:
            raise TargetError(f"target raised {message['raised']}"[:2000])
        return message["reply"]


def _message(line: bytes) -> tuple[object, str | None]:
    """(the worker's JSON message, None), or (None, why the line is out of bounds), or (None, None): not JSON."""
    problem = reply_bounds_problem(line)
    if problem:
        return None, problem
    try:
        return json.loads(line), None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, None
