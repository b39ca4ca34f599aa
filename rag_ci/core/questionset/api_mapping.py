"""An app's own HTTP API mapped onto the target contract by config (docs/targets.md), no adapter code.

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
from jmespath.exceptions import JMESPathError

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

    def search(expression: str, data: Any) -> Any:
        return compile_expression(expression).search(data)

    answer = search(response["answer"], raw)
    if not isinstance(answer, str):
        found = "nothing" if answer is None else f"a {type(answer).__name__}"
        raise TargetError(f"malformed response: target.response.answer `{response['answer']}` found {found}, not text, "
                          f"in the reply {_excerpt(raw)}")
    mapped: dict[str, Any] = {"answer": answer, "contexts": []}
    if response.get("contexts"):
        items = search(response["contexts"], raw)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise TargetError(f"malformed response: target.response.contexts `{response['contexts']}` found a "
                              f"{type(items).__name__}, not a list, in the reply {_excerpt(raw)}")
        fields = response.get("context") or {}
        mapped["contexts"] = [_context(fields, item, i) for i, item in enumerate(items, 1)]
    if response.get("usage"):
        usage = search(response["usage"], raw)
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
        value = compile_expression(expression).search(item)
        if name == "text" and not isinstance(value, str):
            found = "nothing" if value is None else f"a {type(value).__name__}"
            raise TargetError(f"malformed response: target.response.context.text `{expression}` found {found}, not text, "
                              f"in context {number}: {_excerpt(item)}")
        if name in ("doc_id", "source") and value is not None and not isinstance(value, str):
            value = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else json.dumps(value)
        out[name] = value
    return out
