"""results.json in the layout rag-ci writes: written and read one question at a time.

rag-ci writes `RunResult.model_dump_json(indent=2)`, byte for byte, but question by
question (`results_json_chunks`): a 50,000-question file is ~200 MB, and one string of it,
or pydantic's parse tree of the whole file, was as much memory again as the run itself.
`read_streamed` reads such a file back the same way, in chunks of a few MB, each question
validated on its own by pydantic.

Why reading by layout is exact: JSON strings cannot hold a raw newline, so a line that
starts with exactly four spaces and a brace is structure, and in the layout written here
it opens or closes one element of the top-level `questions` array. Each piece found
between such lines is then validated *as a whole JSON value* (a piece cut anywhere else
is not a complete value, and pydantic refuses it), the pieces are separated by a comma and
whitespace only, and the rest of the file with a placeholder in the array's place must be
valid JSON whose top-level `questions` is that placeholder. That is the JSON grammar of
the original file, so the result is the one a whole-file parse gives. Any file that is not
in this layout (hand-edited, another tool's, corrupt) makes `read_streamed` return None,
and the caller reads it whole (rag_ci.files.results_file.load_results), errors and all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from rag_ci.core.results import QuestionResult, RunResult

_OPEN = b'\n  "questions": [\n'  # the array's opening line, after the run's meta
_BETWEEN = b"\n    },\n    {\n"  # one question's closing line, the next one's opening line
_LAST = b"\n    }\n  ]"  # the last question's closing line, the array's
_CLOSE = len(b"\n    }")  # a piece ends with its closing brace
_PLACEHOLDER = "rag-ci: the questions, read one by one"
_CHUNK = 8 << 20
_MAX_HEADER = 64 << 20  # the meta of a run is kilobytes; past this the file is not ours


def results_json_chunks(result: RunResult) -> Iterator[str]:
    """`result.model_dump_json(indent=2) + "\\n"`, the same bytes, one question at a time.

    The run without its questions is dumped by pydantic (so every other field is written
    exactly as before); the questions are dumped one by one into its empty list, each
    indented as the nesting of `model_dump_json(indent=2)` puts it.
    """
    shell = result.model_copy(update={"questions": []}).model_dump_json(indent=2)
    marker = '\n  "questions": [],\n'
    head, found, tail = shell.partition(marker)
    if not found or not result.questions:  # no question (or an unexpected layout): one piece
        yield result.model_dump_json(indent=2) + "\n"
        return
    yield head + '\n  "questions": [\n'
    last = len(result.questions) - 1
    for i, question in enumerate(result.questions):
        text = "    " + question.model_dump_json(indent=2).replace("\n", "\n    ")
        yield text + (",\n" if i < last else "\n")
    yield "  ],\n" + tail + "\n"


def read_streamed(path: Path) -> RunResult | None:
    """The run in `path` when the file is in the layout above, else None (see the module's docstring)."""
    try:
        with open(path, "rb") as handle:
            return _read(handle)
    except (ValidationError, ValueError, UnicodeDecodeError, RecursionError):
        return None  # not in the layout, or not valid: the whole-file reading says what is wrong


def _read(handle: BinaryIO) -> RunResult | None:
    buffer = b""
    while (start := buffer.find(_OPEN)) < 0:
        more = handle.read(_CHUNK)
        if not more or len(buffer) > _MAX_HEADER:
            return None
        buffer += more
    header = buffer[: start + len(_OPEN) - 2]  # up to `"questions": `, the array's `[` left out
    buffer, pos = buffer[start + len(_OPEN) :], 0
    questions: list[QuestionResult] = []
    while True:
        between = buffer.find(_BETWEEN, pos)
        last = buffer.find(_LAST, pos, len(buffer) if between < 0 else between + _CLOSE + len(_LAST))
        if last >= 0 and (between < 0 or last <= between):
            questions.append(QuestionResult.model_validate_json(buffer[pos : last + _CLOSE]))
            tail = buffer[last + len(_LAST) :] + handle.read()
            break
        if between >= 0:
            questions.append(QuestionResult.model_validate_json(buffer[pos : between + _CLOSE]))
            pos = between + len(b"\n    },\n")
            continue
        more = handle.read(_CHUNK)
        if not more:
            return None  # the array never closes in this layout
        buffer, pos = buffer[pos:] + more, 0
    shell = header + json.dumps(_PLACEHOLDER).encode() + tail
    data = json.loads(shell)
    if not isinstance(data, dict) or data.get("questions") != _PLACEHOLDER:
        return None  # the array found is not the top-level `questions`
    result = RunResult.model_validate_json(header + b"[]" + tail)
    result.questions = questions
    return result
