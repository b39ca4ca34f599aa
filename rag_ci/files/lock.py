"""`OutputLock` keeps a second run off an output that a run is writing; `QuestionSetLock`
makes the verbs that read, change and write the question set take turns."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rag_ci.errors import RagCiError
from rag_ci.files.atomic import cannot_write, check_output_path

try:
    import fcntl
except ImportError:  # Windows: no flock, runs are not locked
    fcntl = None  # type: ignore[assignment]


def lock_path(output: Path) -> Path:
    return Path(output).with_name(Path(output).name + ".lock")


class OutputLock:
    """One rag-ci run at a time per output: a second run would mix its answers into
    the first one's journal (and a later --resume would trust them).

    An flock on `<output>.lock`: the OS releases it when the process dies, however it
    dies, so a stale lock file never blocks a later run. The file holds the pid for
    the message and is removed on release.
    """

    wait_s = 0.0  # a second run is refused at once

    def __init__(self, output: Path):
        self.output = Path(output)
        if not self.output.name:  # `-o .`, `-o ./`, `-o ""`: no file to lock beside
            check_output_path(self.output)
        self.path = lock_path(self.output)
        self._fd: int | None = None

    def acquire(self) -> OutputLock:
        check_output_path(self.output)
        if fcntl is None:  # no flock on this system (Windows): run without the guard
            return self
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise cannot_write(self.output, exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
                raise self.busy(holder) from None
            # The holder may have released and removed the file between our open and
            # flock: then we hold a lock on a file nobody else sees; take the new one.
            try:
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as exc:
            os.close(fd)
            raise cannot_write(self.output, exc) from None
        self._fd = fd
        return self

    def busy(self, holder: str) -> RagCiError:
        return RagCiError(
            f"another rag-ci run is writing {self.output} (pid {holder}); "
            "wait for it to finish, stop it, or choose another --output"
        )

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)  # while still locked: see the inode check in acquire
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *_exc_info: object) -> None:
        self.release()


class QuestionSetLock(OutputLock):
    """One read-modify-write of a question set at a time (approve, reject, edit, apply,
    import, review, generate): two at once would each write the set as they read it, and
    the first one's change would be lost. The second one waits for the first (a verb takes
    well under a second; generate holds it only while it appends), then reads the set again."""

    wait_s = 60.0

    def busy(self, holder: str) -> RagCiError:
        return RagCiError(
            f"{self.output}: another rag-ci command (pid {holder}) has been changing the question set "
            f"for over {self.wait_s:.0f} s; let it finish or stop it, then run this again"
        )
