"""A target's reply decoded as JSON, bounded in size and depth *before* it is parsed.

The reply is untrusted: a list nested 200,000 deep made `json.loads` raise RecursionError,
which escaped every target as `internal error: RecursionError`, uncounted by the breaker.
Every target kind decodes its reply here (command and python targets: a stdout line; http
and docker: the response body), and a reply out of bounds is a TargetError saying which
bound, so it is that question's error and the breaker counts it.

The depth is measured without parsing: strings are removed, then the innermost `[]`/`{}`
pairs are removed once per level, at most MAX_REPLY_DEPTH times (each pass at C speed).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rag_ci.errors import TargetError

MAX_REPLY_BYTES = 64 * 1024 * 1024  # replies with many contexts can be long
MAX_REPLY_DEPTH = 100  # a reply with contexts and their metadata is a few levels deep

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}")


def too_deep(data: bytes, limit: int = MAX_REPLY_DEPTH) -> bool:
    """Is the JSON text `data` nested deeper than `limit` levels? (Unbalanced text is left to the parser.)"""
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", data))
    for _ in range(limit):
        if not brackets:
            return False
        brackets, removed = _INNERMOST_PAIR.subn(b"", brackets)
        if not removed:
            return False
    return _INNERMOST_PAIR.search(brackets) is not None


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
        raise TargetError(f"malformed response: the reply is nested deeper than {MAX_REPLY_DEPTH} levels") from None
