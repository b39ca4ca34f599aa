"""The runner's command files, out of the target's reach for good.

A step talks to the runner through files (`GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_OUTPUT`,
`GITHUB_STATE`, `GITHUB_STEP_SUMMARY`) that the runner reads when the step ends: a line in
GITHUB_ENV sets a variable (`LD_PRELOAD`, `NODE_OPTIONS`...) for every later step of the job.
They belong to the runner's user, which is the checkout's owner, which the target runs as
(so that builds can write in the checkout): the target can write them once it finds them
(their names are not in its environment; their folder is easy to find).

So while the target may run, `kept_from_the_target` holds what each file said before it
started; when the replay is over it kills whatever the target left running (its user's
processes below rag-ci: rag-ci becomes the child subreaper first, so even a daemon that
left its process group stays below it), puts back every file the target changed, and names
them (the action warns). The runner reads the files only after the step, so what the
target wrote never reaches it, and rag-ci, which owns the files, writes its own outputs
after: the run's verdict stands (a clean run is not made exit 2 by a target's scribbling,
issue 34). Only a file rag-ci could not put back stops the run. The target's environment
never names the files (rag_ci.targets.processes.without_runner_channels). (A target running as root, by RAG_CI_TARGET_USER=root, is beyond
this: root could rewrite rag-ci itself.)
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from rag_ci.errors import RagCiError
from rag_ci.targets.processes import target_user

COMMAND_FILES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
_PR_SET_CHILD_SUBREAPER = 36
_NOT_A_FILE = b"\0not a regular file\0"  # what a file replaced by a fifo, a folder or a link "says"


@contextmanager
def kept_from_the_target(environ: Mapping[str, str], project_dir: Path) -> Iterator[list[str]]:
    """Yields the list it fills, on the way out, with the names of the files the target changed (and that were put back)."""
    paths = {name: Path(environ[name]) for name in COMMAND_FILES if environ.get(name)}
    _become_subreaper()
    before = {name: _contents(path) for name, path in paths.items()}
    changed: list[str] = []
    try:
        yield changed
    finally:
        user = target_user(project_dir)
        if user is not None:
            stop_descendants(user.uid)
        for name, path in paths.items():
            if _contents(path) != before[name]:
                changed.append(name)
                try:
                    _restore(path, before[name])
                except OSError as exc:
                    raise RagCiError(
                        f"the target changed the runner's {name} ({path}) and rag-ci could not put it back: "
                        f"{exc.strerror or exc}; do not trust this job's later steps"
                    ) from None


def undone_words(changed: list[str]) -> str:
    """The warning for the files the target wrote and rag-ci put back."""
    return (
        f"the target wrote to the runner's command file{'s' if len(changed) > 1 else ''} {', '.join(changed)}, "
        "which would have reached the job's later steps; rag-ci put back what they held before it started, and "
        "nothing the target wrote there reaches the runner. A RAG has no business with these files "
        '(docs/action.md, "Secrets").'
    )


def _become_subreaper() -> None:
    """Orphans of the target become rag-ci's children, not init's (Linux; in the action's
    container rag-ci is init anyway)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _contents(path: Path) -> bytes | None:
    """The file's bytes; None when missing. Never follows a link nor blocks on a fifo."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return _NOT_A_FILE
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return _NOT_A_FILE
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _restore(path: Path, contents: bytes | None) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    if contents is None or contents == _NOT_A_FILE:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, contents)
    finally:
        os.close(fd)


def descendants(uid: int, root: int | None = None) -> list[int]:
    """Every live process of user `uid` below `root` (default: this one), from /proc."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    owners: dict[int, set[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="utf-8", errors="replace") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
            state, ppid = status["State"].split()[0], int(status["PPid"])
            uids = {int(u) for u in status["Uid"].split()}  # real, effective, saved, filesystem
        except (OSError, KeyError, ValueError, IndexError):
            continue
        if state != "Z":  # a zombie is dead already
            children.setdefault(ppid, []).append(int(name))
            owners[int(name)] = uids
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if uid in owners[child]:
                found.append(child)
    return found


def stop_descendants(uid: int, rounds: int = 20) -> None:
    """SIGKILL every process of `uid` that rag-ci started and is still running, until none is left."""
    for _ in range(rounds):
        left = descendants(uid)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
