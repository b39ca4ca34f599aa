"""The reply bounds check costs about what json.loads costs on the same reply.

A red team's 50 MB reply (one long string) took 20 s to check and 0.38 s to parse: a target
answering in 1.7 s timed out at `timeout_s: 5`. The check's cost is measured here against
json.loads on the same input in the same process (CPU time, best of a few runs), so the
bound holds on a loaded machine as on an idle one.
"""

from __future__ import annotations

import json
import random
import time

import pytest

from rag_ci.targets.reply_json import (
    MAX_REPLY_DEPTH,
    brackets_outside_strings,
    reply_bounds_problem,
    too_deep,
)

# json.loads's cost is the yardstick; the check was 50-150 times it on these shapes.
AT_MOST_TIMES_JSON_LOADS = 4


def cpu_seconds(work, data) -> float:
    started = time.process_time()
    work(data)
    return time.process_time() - started


def check_over_parse(data: bytes) -> float:
    """The check's CPU time over json.loads's, each the best of three (a preempted run only lengthens one)."""
    parse = min(cpu_seconds(json.loads, data) for _ in range(3))
    check = min(cpu_seconds(reply_bounds_problem, data) for _ in range(3))
    return check / max(parse, 1e-3)


@pytest.mark.parametrize(
    "shape",
    [
        "one string of 50 MB",
        "an answer of escaped quotes, newlines and backslashes",
        "contexts whose text holds brackets",
    ],
)
def test_a_50_mb_reply_is_checked_at_json_loads_speed(shape):
    if shape == "one string of 50 MB":  # the red team's reply
        reply = {"answer": "x" * 50_000_000}
    elif shape.startswith("an answer of escaped"):
        reply = {"answer": '\\"\n[' * 8_000_000}
    else:
        reply = {
            "answer": "a",
            "contexts": [{"text": "see [1] and {2}, " * 100, "id": i} for i in range(30_000)],
        }
    data = json.dumps(reply).encode()
    assert len(data) > 45_000_000 and reply_bounds_problem(data) is None

    ratio = check_over_parse(data)

    assert ratio <= AT_MOST_TIMES_JSON_LOADS, f"the check took {ratio:.1f} times json.loads's time"


def parser_depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((parser_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((parser_depth(v) for v in value), default=0)
    return 0


def test_strings_full_of_escapes_and_brackets_never_change_the_depth():
    rng = random.Random(56)
    pieces = ["\\", '"', "[", "]", "{", "}", "\\\\", '\\"', "x", "\u00e9", "\n"]

    def text() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))

    def make(levels: int):
        if levels == 0:
            return text()
        inner = [make(levels - 1), text(), *([[text()]] if rng.random() < 0.3 else [])]
        return inner if rng.random() < 0.5 else {text(): v for v in inner}

    for levels in [*range(1, 6), *range(MAX_REPLY_DEPTH - 3, MAX_REPLY_DEPTH + 3)] * 25:
        value = make(levels)
        data = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
        assert too_deep(data) == (parser_depth(value) > MAX_REPLY_DEPTH), levels


def test_the_brackets_left_are_those_outside_strings_across_chunk_boundaries():
    # A string that straddles the 1 MiB chunk boundary: its quote's parity carries over.
    value = ["x" * (1024 * 1024 - 3), [[{"k": "]]]" * 1000}]], "[[["]
    assert brackets_outside_strings(json.dumps(value).encode()) == b"[[[[]]]]"
