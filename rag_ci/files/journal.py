"""The resume journal: every finished question of a run in progress, appended and fsynced.

While a run is in progress every finished question is appended to
`<output>.partial.jsonl`; a killed run leaves it behind and `--resume` picks up
where it stopped.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from rag_ci.core.results import QuestionResult
from rag_ci.files.atomic import cannot_write, fsync_folder, new_file


def journal_path(output: Path) -> Path:
    return Path(output).with_name(Path(output).name + ".partial.jsonl")


class Journal:
    """Append-only record of finished questions for one run, readable after a crash."""

    def __init__(self, path: Path, header: dict[str, Any]):
        self.path = path
        self.header = header
        self._handle: IO[str] | None = None
        self._last_fsync = 0.0

    def read_finished(self) -> dict[str, QuestionResult]:
        """Finished questions of an interrupted run with the same header; {} otherwise.

        A journal of another config or question set is not resumed (its answers
        would not belong to this run); a torn last line (killed mid-write) is skipped.
        """
        if not self.path.is_file():
            return {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        if not lines:
            return {}
        try:
            header = json.loads(lines[0])
        except json.JSONDecodeError:
            return {}
        if header != self.header:
            return {}
        finished: dict[str, QuestionResult] = {}
        for line in lines[1:]:
            try:
                record = QuestionResult.model_validate_json(line)
            except ValidationError:
                continue
            finished[record.id] = record
        return finished

    def open(self, keep: Iterable[QuestionResult]) -> None:
        """Start a fresh journal holding the header and `keep` (the resumed records).

        Written as a new file renamed over the old one: a run killed at any moment
        leaves a complete journal, the old or the new, so a resume loses no finished work.
        """
        tmp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = new_file(self.path.parent, self.path.name)
            handle = os.fdopen(fd, "w", encoding="utf-8")
            try:
                handle.write(json.dumps(self.header, sort_keys=True) + "\n")
                for record in keep:
                    handle.write(record.model_dump_json() + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                handle.close()
                raise
            tmp = None
            fsync_folder(self.path.parent)  # the rename itself survives a machine crash
        except OSError as exc:
            raise cannot_write(self.path, exc) from None
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        self._handle = handle  # the renamed file: appends go on in the same open file
        self._last_fsync = time.monotonic()

    def append(self, record: QuestionResult) -> None:
        assert self._handle is not None, "journal not opened"
        try:
            self._handle.write(record.model_dump_json() + "\n")
            self._sync()
        except OSError as exc:
            raise cannot_write(self.path, exc) from None

    def _sync(self) -> None:
        # flush() is enough to survive a killed process (the OS keeps the data);
        # fsync, for a machine crash, at most twice a second keeps big runs fast.
        assert self._handle is not None
        self._handle.flush()
        now = time.monotonic()
        if now - self._last_fsync > 0.5:
            os.fsync(self._handle.fileno())
            self._last_fsync = now

    def close(self, *, remove: bool) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if remove:
            self.path.unlink(missing_ok=True)
