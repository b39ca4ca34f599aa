"""Files on disk: atomic writes, loading results.json, and the resume journal.

While a run is in progress every finished question is appended (and fsynced) to
`<output>.partial.jsonl`; a killed run leaves it behind and `--resume` picks up
where it stopped. The final results.json is written with temp file + rename, so
a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from rag_ci.core.results import SCHEMA_VERSION, QuestionResult, RunResult
from rag_ci.errors import RagCiError


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so that `path` is always either the old or the new file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_results(path: Path, result: RunResult) -> None:
    write_text_atomic(path, result.model_dump_json(indent=2) + "\n")


def load_results(path: Path, *, what: str = "results file") -> RunResult:
    """Load a results.json; missing, corrupt or foreign files raise RagCiError saying which."""
    path = Path(path)
    if not path.is_file():
        raise RagCiError(f"{what} not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RagCiError(f"{what} {path} is not valid JSON ({exc}); is it a rag-ci results.json?") from None
    if not isinstance(data, dict) or "meta" not in data or "questions" not in data:
        raise RagCiError(f"{what} {path} is not a rag-ci results.json (no `meta`/`questions`)")
    version = data["meta"].get("schema_version") if isinstance(data["meta"], dict) else None
    if version != SCHEMA_VERSION:
        raise RagCiError(
            f"{what} {path} has schema_version {version!r}; this rag-ci reads version {SCHEMA_VERSION}. "
            "Re-create it with this version of rag-ci (re-baseline)."
        )
    try:
        return RunResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise RagCiError(f"{what} {path} is corrupt: {loc}: {first['msg']}") from None


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

    def open(self, keep: list[QuestionResult]) -> None:
        """Start a fresh journal holding `keep` (the resumed records) and the header."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "w", encoding="utf-8")
        self._handle.write(json.dumps(self.header, sort_keys=True) + "\n")
        for record in keep:
            self._handle.write(record.model_dump_json() + "\n")
        self._sync()

    def append(self, record: QuestionResult) -> None:
        assert self._handle is not None, "journal not opened"
        self._handle.write(record.model_dump_json() + "\n")
        self._sync()

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
