"""`kind: python`: call `module:function` with the request dict, in worker processes.

The function runs in `python_worker.py`, started with rag-ci's interpreter and
spoken to like a `kind: command` target, not in rag-ci's own process: there,
`SystemExit(0)` would end rag-ci with exit 0 and no results, and a hung call
would keep it alive for ever (a thread cannot be cancelled). In a worker, every
exception is that question's error and `timeout_s` kills and restarts the worker.
Concurrency is `processes` workers, each importing the entry once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.command import CommandTarget, _Worker

WORKER = Path(__file__).with_name("python_worker.py")


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
    ):
        # The working folder stays rag-ci's own, as when the function ran in-process.
        command = [sys.executable, str(WORKER), entry, *(str(folder) for folder in search_path)]
        super().__init__(command, cwd=cwd or Path.cwd(), env=env, processes=processes, restart_limit=restart_limit)
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
