"""`kind: python`: call `module:function` with the request dict, in worker processes.

The function runs in `python_worker.py`, spoken to like a `kind: command` target,
not in rag-ci's own process: there, `SystemExit(0)` would end rag-ci with exit 0
and no results, and a hung call would keep it alive for ever (a thread cannot be cancelled). In a worker, every
exception is that question's error and `timeout_s` kills and restarts the worker.
Concurrency is `processes` workers, each importing the entry once.

The worker needs only the standard library, so any Python 3 can run it, and the
interpreter decides which packages the user's module imports (`worker_interpreter`):
`target.python` when set; else, in rag-ci's image, the RAG's own virtual environment
(targets/venv.py), so a RAG pinning pydantic<2 imports pydantic 1 while rag-ci keeps
pydantic 2; else the interpreter running rag-ci, as a leading `python` in a command.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.command import CommandTarget, _Worker
from rag_ci.targets.venv import target_venv_dir

WORKER = Path(__file__).with_name("python_worker.py")


def worker_interpreter(setting: str | None, root: Path, target_path: str, environ: Mapping[str, str] | None = None) -> str:
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
        raise RagCiError(f"target.python: {setting} is not an executable file ({candidate} does not exist or cannot run); "
                         "make the venv in a build step, e.g. build: [\"python3 -m venv .venv-rag\", ...]")
    found = shutil.which(setting, path=target_path)
    if found is None:
        raise RagCiError(f"target.python: no {setting} on the target's PATH ({target_path})")
    return found


class PythonTarget(CommandTarget):
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
    ):
        # The working folder stays rag-ci's own, as when the function ran in-process.
        worker = [str(WORKER), entry, *(str(folder) for folder in search_path)]
        super().__init__([sys.executable, *worker], cwd=cwd or Path.cwd(), env=env, processes=processes, restart_limit=restart_limit)
        # After the allow-listed environment exists: in the image, making it made the RAG's venv.
        self.command = [worker_interpreter(python, root or Path.cwd(), self.process_kwargs["env"].get("PATH", os.defpath)), *worker]
        self.entry = entry
        self.startup_grace_s = 0  # the worker says when it is ready (or why not)

    def looks_like_reply(self, reply: dict[str, Any]) -> bool:
        return "id" in reply and ("reply" in reply or "raised" in reply)

    async def handshake(self, worker: _Worker) -> None:
        """Wait for the worker to import the entry: no time limit, as loading a model may be slow."""
        line = await worker.lines.get()
        try:
            ready = json.loads(line) if isinstance(line, bytes) and line else None
        except ValueError:
            ready = None
        if isinstance(ready, dict) and ready.get("ready") is True:
            return
        await worker.kill()
        if isinstance(ready, dict) and ready.get("error"):
            raise RagCiError(f"{ready['error']}\n{self.stderr.text(20)}".rstrip())
        code = worker.process.returncode if worker.process is not None else None
        raise RagCiError(f"target entry {self.entry}: the python worker did not start (code {code})\n{self.stderr.text(20)}".rstrip())

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        message = await super().query(request)
        if "raised" in message:
            raise TargetError(f"target raised {message['raised']}"[:2000])
        return message["reply"]
