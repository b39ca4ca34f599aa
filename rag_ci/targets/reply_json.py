"""A target's reply decoded as JSON, bounded in size and depth *before* it is parsed.

The reply is untrusted: a list nested 200,000 deep made `json.loads` raise RecursionError,
which escaped every target as `internal error: RecursionError`, uncounted by the breaker.
Every target kind decodes its reply here (command and python targets: a stdout line; http
and docker: the response body), and a reply out of bounds is a TargetError saying which
bound, so it is that question's error and the breaker counts it.

The depth is measured without parsing, in linear time: strings are removed, then the
brackets are read as runs (`[[{` opens three levels, `]}` closes two), stopping at the first
level too deep. (It was one pass per level, 100 passes: ~10 s on a 50 MB reply.) Strings are
removed by bytes operations only (escapes out, then a split on quotes), at about json.loads's
speed: a pattern matching them character by character took 20-30 s on one 50 MB string, longer
than a question's time-out, for a reply json.loads parses in 0.2 s. A reply
over OFF_LOOP_BYTES is checked and parsed in a worker thread (`load_reply_off_loop`): the
event loop keeps serving the other questions in flight meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from rag_ci.errors import TargetError

MAX_REPLY_BYTES = 64 * 1024 * 1024  # replies with many contexts can be long
MAX_REPLY_DEPTH = 100  # a reply with contexts and their metadata is a few levels deep

_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_RUN = re.compile(rb"\[+|\]+")
OFF_LOOP_BYTES = 1024 * 1024
_CHUNK_BYTES = (
    1024 * 1024
)  # strings are split out a chunk at a time: a list of pieces per chunk, not per reply


def brackets_outside_strings(data: bytes) -> bytes:
    """The brackets of the JSON text `data` that are not inside a string, `{}` written as `[]`.

    Inside a JSON string a backslash always escapes the next character, so removing every `\\\\`
    (left to right, as the parser pairs them) and then every `\\"` leaves only the quotes that
    open and close strings; what lies between the first and second quote, the third and
    fourth..., is string. All of it at C speed, in chunks (a quote's parity carries over)."""
    plain = data.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in data else data
    kept: list[bytes] = []
    inside = 0
    for start in range(0, len(plain), _CHUNK_BYTES):
        parts = plain[start : start + _CHUNK_BYTES].split(b'"')
        kept.append(b"".join(parts[inside::2]).translate(_AS_SQUARE, _NOT_BRACKETS))
        inside ^= (len(parts) - 1) & 1
    return b"".join(kept)


def too_deep(data: bytes, limit: int = MAX_REPLY_DEPTH) -> bool:
    """Is the JSON text `data` nested deeper than `limit` levels? (Unbalanced text is left to the parser.)"""
    if data.count(b"[") + data.count(b"{") <= limit:  # too few brackets to be too deep, in strings or not
        return False
    # For the depth, the kind of bracket does not matter; mismatched kinds are the parser's to refuse.
    brackets = brackets_outside_strings(data)
    if brackets.count(b"[") <= limit:
        return False
    # Empty pairs (the innermost level) are removed pass by pass at C speed while that shrinks
    # the text by a tenth or more; then what is left is read run by run. Each run boundary from
    # opening to closing is an empty pair, so a pass that removes little leaves few runs: linear
    # either way (one pass per level, as before, was ~10 s on a 50 MB reply).
    removed = 0
    while removed < limit:
        before = len(brackets)
        brackets = brackets.replace(b"[]", b"")
        if len(brackets) == before:
            return False
        removed += 1
        if not brackets:
            return False
        if len(brackets) > 0.9 * before:
            break
    depth = 0
    for run in _RUN.findall(brackets):
        if run[0] == ord("["):
            depth += len(run)
            if depth + removed > limit:
                return True
        else:
            depth = max(0, depth - len(run))
    return False


def reply_bounds_problem(data: bytes | str) -> str | None:
    """Why this reply text is out of bounds, or None."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_REPLY_BYTES:
        return f"the reply is {len(raw):,} bytes, more than rag-ci reads ({MAX_REPLY_BYTES:,})"
    if too_deep(raw):
        return f"the reply is nested deeper than {MAX_REPLY_DEPTH} levels"
    return None


def load_reply(data: bytes | str) -> Any:
    """The reply's JSON value; TargetError when it is out of bounds (never RecursionError).
    Not JSON: json.JSONDecodeError / UnicodeDecodeError, as json.loads raises them."""
    problem = reply_bounds_problem(data)
    if problem:
        raise TargetError(f"malformed response: {problem}")
    try:
        return json.loads(data)
    except RecursionError:  # a safety net: the depth bound comes first
        raise TargetError(
            f"malformed response: the reply is nested deeper than {MAX_REPLY_DEPTH} levels"
        ) from None


async def load_reply_off_loop(data: bytes | str) -> Any:
    """`load_reply`, in a worker thread when the reply is long (checking and parsing 50 MB take
    a few tenths of a second the event loop would otherwise spend away from other questions)."""
    if len(data) > OFF_LOOP_BYTES:
        return await asyncio.to_thread(load_reply, data)
    return load_reply(data)
