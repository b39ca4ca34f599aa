"""JSON values of a reply described in words, by their type as well as their text.

`str(1)` and `str("1")` read the same: "reply for id '1' while '1' was asked" said nothing
about a target echoing the id as a number. And a mapping path that finds nothing says what
the reply holds where the path stops (`the reply has no key "hits" (its keys: "results",
"took")`), so a renamed or null field is not read as "no contexts".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_SHOWN_CHARS = 80
_KEYS_SHOWN = 10
_SIMPLE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def kind(value: Any) -> str:
    """The JSON type of `value` with its article: "a string", "an object", "null"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def described(value: Any) -> str:
    """`value` with its type: `the string "1"`, `the number 1`, `null`, `an object`."""
    if value is None:
        return "null"
    if isinstance(value, (str, int, float)):  # bool is an int: "the boolean true"
        shown = json.dumps(value, ensure_ascii=False)
        if len(shown) > _SHOWN_CHARS:
            shown = shown[:_SHOWN_CHARS] + "…"
        return f"the {kind(value).split()[1]} {shown}"
    return kind(value)


def _keys(node: Mapping[str, Any]) -> str:
    if not node:
        return "an empty object"
    names = [json.dumps(str(k), ensure_ascii=False)[:_SHOWN_CHARS] for k in list(node)[:_KEYS_SHOWN]]
    more = f" and {len(node) - _KEYS_SHOWN} more" if len(node) > _KEYS_SHOWN else ""
    return f"its keys: {', '.join(names)}{more}"


def where_the_path_ends(expression: str, reply: Any) -> str:
    """What `reply` holds where the path `expression` stops finding something: the key that
    is missing and the keys there instead, or the step that is null or not an object. For an
    expression that is not a plain path (functions, projections), what the reply is."""
    if not _SIMPLE_PATH.fullmatch(expression):
        return "the reply is " + (
            kind(reply) + f" ({_keys(reply)})" if isinstance(reply, Mapping) else kind(reply)
        )
    node, walked = reply, ""
    for key in expression.split("."):
        here = f"`{walked}`" if walked else "the reply"
        if not isinstance(node, Mapping):
            return f"{here} is {kind(node)}, not an object with the key {json.dumps(key)}"
        if key not in node:
            return f"{here} has no key {json.dumps(key)} ({_keys(node)})"
        node, walked = node[key], f"{walked}.{key}" if walked else key
        if node is None:
            return f"`{walked}` is null"
    return f"`{walked}` is {kind(node)}"
