"""Shared helpers for targets that run the user's processes: env, interpreter, stderr tail."""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque
from collections.abc import Mapping


def process_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The environment for the user's build steps and target processes.

    The folder of the interpreter running rag-ci comes first on PATH, so that
    `python` in a build step or command is the one with the project installed
    (a virtualenv that was never activated, in CI).
    """
    env = dict(os.environ)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra or {})
    return env


class OutputTail:
    """The last lines a process wrote, kept for the report."""

    def __init__(self, max_lines: int = 200):
        self.lines: deque[str] = deque(maxlen=max_lines)

    def add(self, line: str) -> None:
        self.lines.append(line.rstrip("\n"))

    def text(self, last: int = 50) -> str:
        return "\n".join(list(self.lines)[-last:])

    async def follow(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while True:
            line = await stream.readline()
            if not line:
                return
            self.add(line.decode("utf-8", "replace"))


async def terminate(process: asyncio.subprocess.Process | None, grace_s: float = 3.0) -> None:
    """Stop a process politely, then firmly."""
    if process is None or process.returncode is not None:
        return
    try:
        process.terminate()
        await asyncio.wait_for(process.wait(), grace_s)
    except ProcessLookupError:
        return
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()


async def finish_reader(task: "asyncio.Task[None] | None", grace_s: float = 2.0) -> None:
    """Let an output-following task read the last lines of an exited process, then drop it."""
    if task is None:
        return
    try:
        await asyncio.wait_for(task, grace_s)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        task.cancel()
