"""Drive a target the way the engine does, for the target tests: start it, send each
request in turn, stop it, and hand back every reply or error in order; see which of its
processes are still running (and kill what a failed test left); find a uid without an account to run it as."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import signal
from pathlib import Path

from rag_ci.errors import TargetError
from rag_ci.targets.base import arrived


def replay(target, *steps, wait_s: float = 60):
    """Start, query each request (a number is a pause in seconds), stop: replies, or the
    TargetError / asyncio.TimeoutError (after `wait_s`) each request ended with. `wait_s`
    is generous, a guard against a hang: a request meant to time out is given its own
    wait as `(request, seconds)`."""

    async def go():
        await target.start()
        try:
            results = []
            for step in steps:
                if isinstance(step, (int, float)):
                    await asyncio.sleep(step)
                    continue
                request, wait = step if isinstance(step, tuple) else (step, wait_s)
                try:
                    results.append(arrived(await asyncio.wait_for(target.query(request), wait))[0])
                except (TimeoutError, TargetError) as exc:
                    results.append(exc)
            return results
        finally:
            await target.stop()

    return asyncio.run(go())


def _processes(marker: str) -> dict[int, str]:
    """The live processes whose command line holds `marker`: pid → command line."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in text:
            found[int(cmdline.parent.name)] = text
    return found


def processes_running(marker: str) -> list[str]:
    """The command lines of the live processes whose command line holds `marker`."""
    return list(_processes(marker).values())


def kill_processes(marker: str) -> None:
    """Kill the processes whose command line holds `marker` (a test's own temporary path):
    what a failed test left running does not outlive it."""
    for pid in _processes(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def uid_without_account() -> int:
    """A uid this system has no account for, like the runner's inside the action's container."""
    accounts = {entry.pw_uid for entry in pwd.getpwall()}
    return next(uid for uid in range(1001, 60000) if uid not in accounts)
