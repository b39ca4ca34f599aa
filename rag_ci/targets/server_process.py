"""The server a `start` command launches (http targets), stopped whole, and its output read for
what went wrong.

The command often starts more than one process (a shell script, a supervisor, a second server
for search): it runs in its own process group, and stopping it signals the whole group, as for
command targets, so no child outlives the run. Its output is mostly access-log lines; the
diagnostics put the error lines (tracebacks, ERROR, Exception) ahead of them.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal

from rag_ci.targets.processes import OutputTail

# A line that says something went wrong; a traceback's indented lines follow its first line.
_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b(ERROR|CRITICAL|FATAL)\b|\w*(Error|Exception)\b|panic:"
)


def _signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    """`sig` to the server's group, and to the server itself (a group it left, or one not
    ours to signal, never keeps the server running)."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone, or not ours to signal (it changed user)
    if process.returncode is None:
        try:
            process.send_signal(sig)
        except ProcessLookupError:
            pass


async def stop_group(process: asyncio.subprocess.Process | None, grace_s: float = 3.0) -> None:
    """SIGTERM to the server's group, SIGKILL after `grace_s`; then to what is left of the group
    (a child that ignored SIGTERM or outlived its parent)."""
    if process is None:
        return
    if process.returncode is None:
        _signal_group(process, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            _signal_group(process, signal.SIGKILL)
            await process.wait()
    _signal_group(process, signal.SIGKILL)


def errors_first(tail: OutputTail, last: int = 50) -> str:
    """The server's last lines, its error lines (a traceback whole) first: a traceback scrolled
    away under access-log lines is what the user needs to read."""
    lines = list(tail.lines)
    picked: list[int] = []
    in_traceback = False
    for i, line in enumerate(lines):
        if in_traceback:
            picked.append(i)
            # the exception's own line (not indented) closes the traceback
            in_traceback = line.startswith((" ", "\t")) or not line.strip()
        elif _ERROR.search(line):
            picked.append(i)
            in_traceback = line.lstrip().startswith("Traceback")
    if not picked:
        return tail.text(last)
    picked = picked[-last:]
    shown = [lines[i] for i in picked]
    room = last - len(picked) - 1  # the other lines under their heading, within `last`
    if room > 0:
        kept = set(picked)
        others = [line for i, line in enumerate(lines) if i not in kept][-room:]
        shown += ["--- the server's last other lines ---", *others] if others else []
    return "\n".join(shown)
