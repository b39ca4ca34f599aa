"""An app's own HTTP API mapped onto the target contract by config (DESIGN §3), no adapter code.

`target.request` is a JSON template: a string that is exactly `"{id}"`, `"{question}"` or
`"{corpora}"` becomes the value (`{corpora}` the list of routed corpora); inside a longer
string the placeholders are replaced by their text (corpora joined by ","). `target.response`
holds JMESPath expressions (the `jmespath` package) that read the app's reply: `answer`,
`contexts` (a list), per context `text`, `doc_id`, `source`, `score`, and `usage` (an object
in the contract's shape, e.g. `{model: meta.model, input_tokens: meta.tokens_in}`).

A context's `doc_id` must come from the chunk's own metadata (the corpus the chunk was
indexed from): an expression echoing the request's corpus would make every routing leak
invisible. Pure: the HTTP target applies it (rag_ci/targets/http.py).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError, JMESPathTypeError

from rag_ci.errors import TargetError

PLACEHOLDERS = ("id", "question", "corpora")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@functools.lru_cache(maxsize=256)
def compile_expression(expression: str) -> Any:
    """Compile a JMESPath expression; a bad one raises ValueError with the parser's words."""
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        detail = " ".join(str(exc).split())
        raise ValueError(f"not a JMESPath expression ({detail}); see https://jmespath.org") from None


def check_template(template: Any) -> None:
    """ValueError when the template names an unknown placeholder or never sends the question."""
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, str):
            for name in _PLACEHOLDER.findall(node):
                if name not in PLACEHOLDERS:
                    known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                    raise ValueError(f"unknown placeholder {{{name}}} in {node!r}; known: {known}")
                seen.add(name)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                walk(key)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(template)
    if "question" not in seen:
        raise ValueError('the template never sends the question: put "{question}" where the API expects it')


def render_request(template: Any, request: Mapping[str, Any]) -> Any:
    """The app's request body for one rag-ci request (`{"id", "question", "corpora"}`)."""
    values = {"id": str(request["id"]), "question": str(request["question"]), "corpora": list(request["corpora"])}

    def text(name: str) -> str:
        value = values[name]
        return ",".join(value) if isinstance(value, list) else value

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            whole = _PLACEHOLDER.fullmatch(node)
            if whole and whole.group(1) in values:
                return values[whole.group(1)]
            return _PLACEHOLDER.sub(lambda m: text(m.group(1)) if m.group(1) in values else m.group(0), node)
        if isinstance(node, Mapping):
            return {fill(key): fill(value) for key, value in node.items()}
        if isinstance(node, list):
            return [fill(item) for item in node]
        return node

    return fill(template)


def _excerpt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:200]


def map_reply(response: Mapping[str, Any], raw: Any) -> dict[str, Any]:
    """The app's reply, read with the `target.response` expressions, in the contract's shape.

    `response` is the config's mapping as plain data: `answer`, optional `contexts`,
    `context` (`text`, `doc_id`, `source`, `score`) and `usage`. What an expression cannot
    find is a malformed response naming the expression and a piece of the reply."""

    def search(expression: str, data: Any, name: str) -> Any:
        return search_reply(expression, data, name)

    answer = search(response["answer"], raw, "answer")
    if not isinstance(answer, str):
        found = "nothing" if answer is None else f"a {type(answer).__name__}"
        raise TargetError(f"malformed response: target.response.answer `{response['answer']}` found {found}, not text, "
                          f"in the reply {_excerpt(raw)}")
    mapped: dict[str, Any] = {"answer": answer, "contexts": []}
    if response.get("contexts"):
        items = search(response["contexts"], raw, "contexts")
        if items is None:
            items = []
        if not isinstance(items, list):
            raise TargetError(f"malformed response: target.response.contexts `{response['contexts']}` found a "
                              f"{type(items).__name__}, not a list, in the reply {_excerpt(raw)}")
        fields = response.get("context") or {}
        mapped["contexts"] = [_context(fields, item, i) for i, item in enumerate(items, 1)]
    if response.get("usage"):
        usage = search(response["usage"], raw, "usage")
        if usage is not None and not isinstance(usage, Mapping):
            raise TargetError(f"malformed response: target.response.usage `{response['usage']}` found a "
                              f"{type(usage).__name__}, not an object")
        mapped["usage"] = usage
    return mapped


CONTEXT_DEFAULTS = {"text": "text", "doc_id": "doc_id", "source": "source", "score": "score"}


def _context(fields: Mapping[str, Any], item: Any, number: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, default in CONTEXT_DEFAULTS.items():
        expression = fields.get(name) or default
        value = search_reply(expression, item, f"context.{name}", where=f" (context {number})")
        if name == "text" and not isinstance(value, str):
            found = "nothing" if value is None else f"a {type(value).__name__}"
            raise TargetError(f"malformed response: target.response.context.text `{expression}` found {found}, not text, "
                              f"in context {number}: {_excerpt(item)}")
        if name in ("doc_id", "source") and value is not None and not isinstance(value, str):
            value = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else json.dumps(value)
        out[name] = value
    return out


# The error path of a search: a JMESPath error at run time (a function given the wrong
# type, e.g. `join` on objects) is the reply not fitting the mapping, a target error the
# breaker counts, never `internal error: JMESPathTypeError`.

_JMESPATH_TYPE_WORDS = {"string": "a string", "number": "a number", "boolean": "a boolean", "array": "an array",
                        "object": "an object", "null": "null", "expref": "an &expression",
                        "array-string": "strings", "array-number": "numbers"}
_WALK_LIMIT = 10_000  # values looked at to say where the offending one sits


def search_reply(expression: str, data: Any, field: str, *, where: str = "") -> Any:
    """`expression` applied to `data`; TargetError naming `target.response.<field>`, the
    expression and the offending value's type (and where it sits) when it fails."""
    try:
        return compile_expression(expression).search(data)
    except JMESPathTypeError as exc:
        raise TargetError(f"malformed response: {type_error_words(field, exc, data)}{where}; expression `{expression}`") from None
    except JMESPathError as exc:
        raise TargetError(f"malformed response: target.response.{field} `{expression}`: {' '.join(str(exc).split())[:300]}{where}") from None
    except RecursionError:
        raise TargetError(f"malformed response: target.response.{field} `{expression}`: the reply is nested too deeply{where}") from None


def jmespath_type(value: Any) -> str:
    """The JMESPath name of a Python value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, Mapping) else type(value).__name__


def type_error_words(field: str, exc: JMESPathTypeError, data: Any) -> str:
    """"target.response.answer: join() needs strings, got an object at result.sources[0]"."""
    needs = " or ".join(_JMESPATH_TYPE_WORDS.get(t, t) for t in exc.expected_types)
    kind = jmespath_type(exc.current_value)
    got = _JMESPATH_TYPE_WORDS.get(kind, f"a {kind}") if kind != "null" else "null"
    path = path_of(exc.current_value, data)
    return f"target.response.{field}: {exc.function_name}() needs {needs}, got {got}" + (f" at {path}" if path else "")


def path_of(value: Any, data: Any) -> str | None:
    """Where `value` sits in `data`, as a JMESPath-like path (`result.sources[0]`), when it
    is found among the first values looked at; None otherwise (e.g. a computed value)."""
    todo: list[tuple[Any, str]] = [(data, "")]
    seen = 0
    while todo and seen < _WALK_LIMIT:
        node, path = todo.pop(0)
        seen += 1
        if node is value and path or (path and not isinstance(node, (list, Mapping)) and type(node) is type(value)
                                      and node == value):
            return path
        if isinstance(node, Mapping):
            todo.extend((child, f"{path}.{_key(key)}" if path else _key(key)) for key, child in node.items())
        elif isinstance(node, list):
            todo.extend((child, f"{path}[{i}]") for i, child in enumerate(node))
    return None


def _key(key: Any) -> str:
    text = str(key)
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else json.dumps(text)
