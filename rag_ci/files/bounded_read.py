"""The first bytes of a file of the user's repository, never more, and only of a regular file.

Readers that look into a repository to guess or check something (`init`'s detection, the
git credential check) read at most what they use: a 1.5 GB `app.py` is not read whole to
look at its first 100,000 characters, `main: /dev/zero` in package.json does not fill the
memory, and a FIFO does not block for ever (it is opened without waiting for a writer,
then refused as not a regular file).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def read_head(path: Path | str, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file `path` (links followed); None when it is
    missing, unreadable, or not a regular file (a device, a FIFO, a socket, a folder)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_head_text(path: Path | str, limit: int) -> str:
    """`read_head` as text (undecodable bytes replaced; a character cut at the limit too); "" for None."""
    data = read_head(path, limit)
    return "" if data is None else data.decode("utf-8", errors="replace")
