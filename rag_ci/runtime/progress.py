"""Progress on long runs: a rich bar on a terminal, plain periodic lines in CI logs."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Progress(Protocol):
    def advance(self, verdict: str) -> None: ...
    def close(self) -> None: ...


class SilentProgress:
    def advance(self, verdict: str) -> None:
        pass

    def close(self) -> None:
        pass


class LineProgress:
    """One line every 10% or 10 seconds: readable in a CI log, no control characters."""

    def __init__(self, total: int, stream: TextIO, label: str = "questions", failures: str = "not passing"):
        self.total, self.stream, self.label, self.failures = total, stream, label, failures
        self.done = self.failed = 0
        self._last_line = time.monotonic()
        self._last_decile = -1

    def advance(self, verdict: str) -> None:
        self.done += 1
        self.failed += verdict != "pass"
        decile = self.done * 10 // max(self.total, 1)
        if decile != self._last_decile or time.monotonic() - self._last_line > 10 or self.done == self.total:
            self._last_decile, self._last_line = decile, time.monotonic()
            print(
                f"[rag-ci] {self.done}/{self.total} {self.label} ({self.failed} {self.failures})",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        pass


class RichProgress:
    def __init__(self, total: int, label: str = "questions", failures: str = "not passing"):
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        self.failed = 0
        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} " + failures),
            TimeElapsedColumn(),
            transient=False,
        )
        self._task = self._bar.add_task(label, total=total, failed=0)
        self._bar.start()

    def advance(self, verdict: str) -> None:
        self.failed += verdict != "pass"
        self._bar.update(self._task, advance=1, failed=self.failed)

    def close(self) -> None:
        self._bar.stop()


def make_progress(
    total: int,
    enabled: bool,
    stream: TextIO | None = None,
    label: str = "questions",
    failures: str = "not passing",
) -> Progress:
    stream = stream or sys.stderr
    if not enabled:
        return SilentProgress()
    if stream.isatty():
        return RichProgress(total, label, failures)
    return LineProgress(total, stream, label, failures)
