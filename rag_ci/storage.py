"""Files on disk: atomic writes, loading results.json, and the resume journal.

While a run is in progress every finished question is appended (and fsynced) to
`<output>.partial.jsonl`; a killed run leaves it behind and `--resume` picks up
where it stopped. The final results.json, and the journal when a resume starts
it afresh, are written with temp file + rename, so a reader never sees half a file
and a crash never loses finished work. `OutputLock` keeps a second run off an
output that a run is writing. Write errors (read-only folder, full disk) become
RagCiError: exit 2 with the cause. Files are created with the permissions the umask
allows, as `open()` would (a temp file alone would be 0600 whatever the umask says).
"""

from __future__ import annotations

import errno
import gc
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from rag_ci.core.scoring.results import SCHEMA_VERSION, QuestionResult, RunResult
from rag_ci.core.questionset.yamlsrc import no_cyclic_gc, shape_problem
from rag_ci.results_layout import read_streamed, results_json_chunks
from rag_ci.errors import RagCiError

try:
    import fcntl
except ImportError:  # Windows: no flock, runs are not locked
    fcntl = None  # type: ignore[assignment]

# A results.json nests about six levels; the limit leaves room and stays far below
# the recursion limits of json and pydantic.
MAX_JSON_DEPTH = 64


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


def _new_file(folder: Path, name: str) -> tuple[int, str]:
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


def write_chunks_atomic(path: Path, chunks: Iterable[str]) -> None:
    """`write_text_atomic` of the concatenated `chunks`, written as they come: a file larger
    than memory is never held whole (results.json of 50,000 questions is ~400 MB as one string)."""
    path = check_output_path(path)
    tmp = None
    try:
        fd, tmp = _new_file(path.parent, path.name)
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


def save_results(path: Path, result: RunResult) -> None:
    write_chunks_atomic(path, results_json_chunks(result))


# Free-form values (dicts of Any) nested this deep send a file to the precise reading, which
# applies MAX_JSON_DEPTH to the whole file exactly as it always did. The schema's own fields
# add at most 7 levels above a free-form value (questions → question → carried → metrics →
# metric → judge_replies), so no file that the old reading accepted takes the slow path
# for nothing, and none that it refused is accepted.
_SUSPECT_DEPTH = MAX_JSON_DEPTH - 8
# Questions from which a loaded run is moved out of the cycle collector's sight (gc.freeze).
# Below, the collector's walks cost nothing worth measuring, and freezing would also keep
# whatever garbage cycles exist at that moment for good (a test process loads hundreds of runs).
FROZEN_FROM = 2_000


def _free_form_values(result: RunResult) -> Iterator[Any]:
    """The values of `result` typed `Any` (everything else has the schema's fixed depth)."""
    meta = result.meta
    if meta.judge is not None:
        yield meta.judge.metrics
    if meta.policy is not None:
        yield from (meta.policy.gate, meta.policy.metrics, meta.policy.judge)
    for question in result.questions:
        if _nests(question.request):
            yield question.request
        for metric in question.metrics.values():
            if metric.judge_replies:
                yield metric.judge_replies
        if question.carried is not None:
            for metric in question.carried.metrics.values():
                if metric.judge_replies:
                    yield metric.judge_replies


def _nests(value: dict[str, Any]) -> bool:
    """Has `value` a list or mapping inside a list or mapping (else its depth is at most 2, nothing to check)?"""
    for child in value.values():
        if isinstance(child, dict):
            child = child.values()
        elif not isinstance(child, list):
            continue
        if any(isinstance(x, (dict, list)) for x in child):
            return True
    return False


def load_results(path: Path, *, what: str = "results file") -> RunResult:
    """Load a results.json; missing, corrupt or foreign files raise RagCiError saying which.

    A file in the layout rag-ci writes is read one question at a time
    (rag_ci.results_layout: pydantic's parse of a whole 50,000-question file was as much
    memory again as the run); any other is parsed whole by pydantic, straight into the
    schema's objects. A file that does not validate is read again by `_load_checked`, which
    says what is wrong with it exactly as before.
    """
    path = Path(path)
    if not path.is_file():
        raise RagCiError(f"{what} not found: {path}")
    try:
        with no_cyclic_gc():  # half the time at 50,000 questions (yamlsrc.no_cyclic_gc says why)
            result = read_streamed(path)  # the layout rag-ci writes, one question at a time
            if result is None:
                raw = path.read_bytes()
                try:
                    result = RunResult.model_validate_json(raw)
                except ValidationError:  # not JSON, not this schema, or nested past pydantic's own limit
                    return _load_checked(raw, path, what)
            if len(result.questions) >= FROZEN_FROM:
                # A large run is read to be kept until the command ends, and holds no reference
                # cycle: frozen, no collection walks its objects again. Without it the first
                # collection after the load walked all of them, and every later full one again
                # (`compare` of two 50,000-question runs: 17 s → 11 s).
                gc.freeze()
    except OSError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if result.meta.schema_version == SCHEMA_VERSION and not any(
            shape_problem(value, _SUSPECT_DEPTH) for value in _free_form_values(result)):
        return result
    del result
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    return _load_checked(raw, path, what)


def _load_checked(raw: bytes, path: Path, what: str) -> RunResult:
    """The slow, precise reading: JSON, then shape, schema version and fields, each refused with its cause."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RagCiError(f"{what} {path} is not valid JSON ({exc}); is it a rag-ci results.json?") from None
    except RecursionError:
        data = None
        problem: str | None = f"nested deeper than {MAX_JSON_DEPTH} levels"
    else:
        problem = shape_problem(data, MAX_JSON_DEPTH)
    if problem is not None:
        raise RagCiError(f"{what} {path} is not a rag-ci results.json: {problem}")
    if not isinstance(data, dict) or "meta" not in data or "questions" not in data:
        raise RagCiError(f"{what} {path} is not a rag-ci results.json (no `meta`/`questions`)")
    version = data["meta"].get("schema_version") if isinstance(data["meta"], dict) else None
    if version != SCHEMA_VERSION:
        raise RagCiError(
            f"{what} {path} has schema_version {version!r}; this rag-ci reads version {SCHEMA_VERSION}. "
            "Re-create it with this version of rag-ci (re-baseline)."
        )
    try:
        with no_cyclic_gc():
            return RunResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        got = f" (got {first['input']!r:.80})" if isinstance(first.get("input"), (int, float)) else ""
        raise RagCiError(f"{what} {path} is corrupt: {loc}: {first['msg']}{got}") from None


def _fsync_folder(folder: Path) -> None:
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
            fd, tmp = _new_file(self.path.parent, self.path.name)
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
            _fsync_folder(self.path.parent)  # the rename itself survives a machine crash
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


def lock_path(output: Path) -> Path:
    return Path(output).with_name(Path(output).name + ".lock")


class OutputLock:
    """One rag-ci run at a time per output: a second run would mix its answers into
    the first one's journal (and a later --resume would trust them).

    An flock on `<output>.lock`: the OS releases it when the process dies, however it
    dies, so a stale lock file never blocks a later run. The file holds the pid for
    the message and is removed on release.
    """

    def __init__(self, output: Path):
        self.output = Path(output)
        if not self.output.name:  # `-o .`, `-o ./`, `-o ""`: no file to lock beside
            check_output_path(self.output)
        self.path = lock_path(self.output)
        self._fd: int | None = None

    def acquire(self) -> "OutputLock":
        check_output_path(self.output)
        if fcntl is None:  # no flock on this system (Windows): run without the guard
            return self
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
                raise RagCiError(
                    f"another rag-ci run is writing {self.output} (pid {holder}); "
                    "wait for it to finish, stop it, or choose another --output"
                ) from None
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

    def release(self) -> None:
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)  # while still locked: see the inode check in acquire
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "OutputLock":
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()
