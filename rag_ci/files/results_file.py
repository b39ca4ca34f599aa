"""results.json on disk: written atomically, read back one question at a time.

A missing, corrupt or foreign file raises RagCiError saying which (exit 2).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag_ci.core.base.yamlsrc import no_cyclic_gc, shape_problem
from rag_ci.core.results import SCHEMA_VERSION, RunResult
from rag_ci.errors import RagCiError
from rag_ci.files.atomic import write_chunks_atomic
from rag_ci.files.results_layout import read_streamed, results_json_chunks

# A results.json nests about six levels; the limit leaves room and stays far below
# the recursion limits of json and pydantic.
MAX_JSON_DEPTH = 64


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
    (rag_ci.files.results_layout: pydantic's parse of a whole 50,000-question file was as much
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
    except OSError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if result.meta.schema_version == SCHEMA_VERSION and not any(
        shape_problem(value, _SUSPECT_DEPTH) for value in _free_form_values(result)
    ):
        return result
    del result
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    return _load_checked(raw, path, what)


def keep_until_exit(result: RunResult) -> RunResult:
    """Move a large loaded run out of the cycle collector's sight, for a caller that keeps it
    until the command ends (a run holds no reference cycle).

    Frozen, no collection walks its objects again. Without it the first collection after the
    load walked all of them, and every later full one again (`compare` of two 50,000-question
    runs: 17 s → 11 s). The caller decides: only it knows that the run lives as long as the process.
    """
    if len(result.questions) >= FROZEN_FROM:
        gc.freeze()
    return result


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
