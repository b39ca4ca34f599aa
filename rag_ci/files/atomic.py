"""Atomic writes: a file on disk is always either the old or the new one, never half of either.

Files are written with temp file + rename (and fsynced), so a reader never sees half a file
and a crash never loses finished work. Write errors (read-only folder, full disk) become
RagCiError: exit 2 with the cause. Files are created with the permissions the umask
allows, as `open()` would (a temp file alone would be 0600 whatever the umask says).
The results file, the resume journal and the output lock build on these
(rag_ci.files.results_file, rag_ci.files.journal, rag_ci.files.lock).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from rag_ci.errors import RagCiError


def cannot_write(path: Path, exc: OSError) -> RagCiError:
    """An OSError while writing `path` as a user-facing error: the cause, not a traceback.

    A read-only folder, a full disk or a missing permission is the environment's
    problem: exit 2, never 1 (which means "regression").
    """
    cause = exc.strerror or str(exc)
    hint = ""
    if exc.errno == errno.ENOSPC:
        hint = " (the disk is full)"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = " (choose a writable folder with --output)"
    return RagCiError(f"cannot write {path}: {cause}{hint}")


def check_output_path(path: Path) -> Path:
    """Refuse an output that can never be written (a folder, a device); create its folder.

    Called before long work so that a run fails in a second, not after 500 questions.
    """
    path = Path(path)
    if path.is_dir() or not path.name:
        raise RagCiError(f"output {path} is a folder; give a file name, e.g. {path / 'results.json'}")
    if path.exists() and not path.is_file():
        raise RagCiError(f"output {path} is not a regular file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):  # can we create files there at all?
            pass
    except OSError as exc:
        raise cannot_write(path, exc) from None
    return path


def current_umask() -> int:
    """The process's umask, read without changing it (os.umask can only set it: setting
    and restoring would let another thread create a file under the wrong mask meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no /proc (macOS): the set-and-restore it is
    os.umask(mask)
    return mask


def new_file(folder: Path, name: str) -> tuple[int, str]:
    """A temp file beside `name`, with the mode a plain `open()` would give it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
    except OSError:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that `path` is always either the old or the new file."""
    write_chunks_atomic(path, (text,))


def write_text_keeping_newlines(path: Path, text: str) -> None:
    """`write_text_atomic`, with the line endings the file had: a file written with CRLF
    (read as LF, as Python reads text) is written back with CRLF."""
    try:
        with open(path, "rb") as old:
            crlf = b"\r\n" in old.read(65536)
    except OSError:
        crlf = False
    write_text_atomic(path, text.replace("\r\n", "\n").replace("\n", "\r\n") if crlf else text)


def write_chunks_atomic(path: Path, chunks: Iterable[str]) -> None:
    """`write_text_atomic` of the concatenated `chunks`, written as they come: a file larger
    than memory is never held whole (results.json of 50,000 questions is ~400 MB as one string)."""
    path = check_output_path(path)
    tmp = None
    try:
        fd, tmp = new_file(path.parent, path.name)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise cannot_write(path, exc) from None
        raise


def fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # not every system opens folders; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
