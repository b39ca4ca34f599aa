"""An app's own HTTP API mapped onto the target contract by config (docs/targets.md), no adapter code.

`target.request` is a JSON template: a string that is exactly `"{id}"`, `"{question}"`,
`"{corpora}"`, `"{messages}"` or `"{conversation_id}"` becomes the value (`{corpora}` the list of
routed corpora, `{messages}` the chat messages of a conversation's turn); inside a longer
string the placeholders are replaced by their text (corpora joined by ","); a mapping
`{each_corpus: TEMPLATE, join?: SEPARATOR}` repeats TEMPLATE per corpus (a list, or with
`join` one string). `target.response`
holds JMESPath expressions (the `jmespath` package, plus rag-ci's string functions
`strip_prefix`, `strip_suffix`, `replace`, `split`: StringFunctions) that read the app's reply: `answer`,
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
from jmespath import functions
from jmespath.exceptions import JMESPathError, JMESPathTypeError

from rag_ci.core.base.value_words import where_the_path_ends
from rag_ci.errors import TargetError

# `{messages}`: the conversation so far in the chat APIs' shape, ending with this question (a plain
# question is a conversation of one message); `{conversation_id}`: the conversation's id (a plain
# question's own id). docs/conversations.md.
PLACEHOLDERS = ("id", "question", "corpora", "messages", "conversation_id")
MAX_EXPRESSION_CHARS = 1000
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@functools.lru_cache(maxsize=256)
def compile_expression(expression: str) -> Any:
    """Compile a JMESPath expression; a bad one raises ValueError with the parser's words.
    The result's `.search(data)` knows rag-ci's string functions (`strip_prefix`...)."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ValueError(
            f"a JMESPath expression of {len(expression):,} characters: at most {MAX_EXPRESSION_CHARS:,} "
            "(a path into the app's reply is a few dozen)"
        )
    try:
        parsed = jmespath.compile(expression)
        check_functions(parsed.parsed)
    except JMESPathError as exc:
        detail = " ".join(str(exc).split())
        raise ValueError(f"not a JMESPath expression ({detail}); see https://jmespath.org") from None
    except RecursionError:  # the parser recurses per level: `((((…` thousands deep
        raise ValueError("a JMESPath expression nested too deeply to read") from None
    return MappingExpression(parsed)


class StringFunctions(functions.Functions):
    """JMESPath functions for an app's own naming (docs/targets.md): a source reported as
    `data/du2/battery.md` is `strip_prefix(metadata.path, 'data/')`, its corpus
    `split(metadata.path, '/')[1]`. Each leaves a value without the prefix/suffix as it is."""

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_strip_prefix(self, value: str, prefix: str) -> str:
        return value[len(prefix) :] if prefix and value.startswith(prefix) else value

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_strip_suffix(self, value: str, suffix: str) -> str:
        return value[: -len(suffix)] if suffix and value.endswith(suffix) else value

    @functions.signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_replace(self, value: str, old: str, new: str) -> str:
        return value.replace(old, new) if old else value

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_split(self, value: str, separator: str) -> list[str]:
        return value.split(separator) if separator else [value]


SEARCH_OPTIONS = jmespath.Options(custom_functions=StringFunctions())
_FUNCTIONS = SEARCH_OPTIONS.custom_functions.FUNCTION_TABLE


class MappingExpression:
    """A compiled expression searched with rag-ci's functions; `.expression` is its text."""

    def __init__(self, parsed: Any):
        self.parsed = parsed
        self.expression = parsed.expression

    def search(self, data: Any) -> Any:
        return self.parsed.search(data, options=SEARCH_OPTIONS)


def check_functions(node: Any) -> None:
    """ValueError for a function JMESPath would only refuse at the first reply: an unknown
    name, or the wrong number of arguments."""
    if not isinstance(node, dict):
        return
    if node.get("type") == "function_expression":
        name, given = node.get("value"), len(node.get("children", ()))
        if name not in _FUNCTIONS:
            raise ValueError(
                f"unknown function {name}(); rag-ci's own: strip_prefix(s, prefix), strip_suffix(s, suffix), "
                "replace(s, old, new), split(s, separator); the rest: https://jmespath.org/specification.html"
            )
        wanted = _FUNCTIONS[name]["signature"]
        variadic = any(arg.get("variadic") for arg in wanted)
        if given < len(wanted) - variadic or (not variadic and given != len(wanted)):
            raise ValueError(
                f"{name}() takes {len(wanted)}{' or more' if variadic else ''} argument(s), got {given}"
            )
    for child in node.get("children", ()):
        check_functions(child)


def check_template(template: Any) -> None:
    """ValueError when the template names an unknown placeholder, misuses `each_corpus`, or
    never sends the question."""
    seen: set[str] = set()

    def walk(node: Any, known: tuple[str, ...]) -> None:
        if isinstance(node, str):
            for name in _PLACEHOLDER.findall(node):
                if name not in known:
                    names = ", ".join("{" + p + "}" for p in known)
                    where = " inside each_corpus" if "corpus" in known else ""
                    hint = " ({corpus} only inside each_corpus)" if name == "corpus" else ""
                    raise ValueError(
                        f"unknown placeholder {{{name}}} in {node!r}{where}; known: {names}{hint}"
                    )
                seen.add(name)
        elif isinstance(node, Mapping) and EACH_CORPUS in node:
            check_each_corpus(node)
            walk(node[EACH_CORPUS], EACH_CORPUS_PLACEHOLDERS)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                walk(key, known)
                walk(value, known)
        elif isinstance(node, list):
            for item in node:
                walk(item, known)

    walk(template, PLACEHOLDERS)
    if "question" not in seen and "messages" not in seen:
        raise ValueError('the template never sends the question: put "{question}" where the API expects it')


# `{each_corpus: TEMPLATE, join?: SEPARATOR}` in a request template: TEMPLATE once per routed
# corpus ({corpus} is that corpus), giving a list, or, with `join`, one string. For APIs that
# filter with an expression (`{each_corpus: "contains(path, 'data/{corpus}/')", join: " || "}`)
# or a list of filter objects (`{each_corpus: {field: collection, value: "{corpus}"}}`).
EACH_CORPUS = "each_corpus"
EACH_CORPUS_PLACEHOLDERS = ("id", "question", "corpus")


def check_each_corpus(node: Mapping[str, Any]) -> None:
    extra = sorted(str(k) for k in node if k not in (EACH_CORPUS, "join"))
    if extra:
        raise ValueError(f"each_corpus takes only `join` beside it, not {', '.join(extra)}")
    join = node.get("join")
    if "join" in node and not isinstance(join, str):
        raise ValueError('each_corpus: `join` is the separator between the corpora\'s strings, e.g. " || "')
    if "join" in node and not isinstance(node[EACH_CORPUS], str):
        raise ValueError(
            "each_corpus with `join`: the template must be a string, e.g. \"collection = '{corpus}'\""
        )
    if isinstance(node[EACH_CORPUS], str) and "{corpus}" not in node[EACH_CORPUS]:
        raise ValueError("each_corpus: the template never names {corpus}")


def render_request(template: Any, request: Mapping[str, Any]) -> Any:
    """The app's request body for one rag-ci request (`{"id", "question", "corpora"}`, and a
    conversation turn's `messages` and `conversation_id`)."""
    values = {
        "id": str(request["id"]),
        "question": str(request["question"]),
        "corpora": list(request["corpora"]),
        "messages": list(request.get("messages") or [{"role": "user", "content": str(request["question"])}]),
        "conversation_id": str(request.get("conversation_id") or request["id"]),
    }
    return _fill(template, values)


def _fill(node: Any, values: Mapping[str, Any]) -> Any:
    def text(name: str) -> str:
        value = values[name]
        if name == "messages":  # inside a longer string: the messages as JSON
            return json.dumps(value, ensure_ascii=False)
        return ",".join(value) if isinstance(value, list) else value

    if isinstance(node, str):
        whole = _PLACEHOLDER.fullmatch(node)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: text(m.group(1)) if m.group(1) in values else m.group(0), node)
    if isinstance(node, Mapping) and EACH_CORPUS in node:
        return render_each_corpus(node, values)
    if isinstance(node, Mapping):  # a key is always text: `"{corpora}": 1` is the joined names, never a list
        return {
            _PLACEHOLDER.sub(lambda m: text(m.group(1)) if m.group(1) in values else m.group(0), key)
            if isinstance(key, str)
            else key: _fill(value, values)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_fill(item, values) for item in node]
    return node


def render_each_corpus(node: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
    each = {k: v for k, v in values.items() if k != "corpora"}
    items = [_fill(node[EACH_CORPUS], {**each, "corpus": corpus}) for corpus in values["corpora"]]
    return str(node["join"]).join(items) if "join" in node else items


def _excerpt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:200]


def _found_nothing(name: str, expression: str, found: Any, wanted: str, raw: Any) -> str:
    """`name`'s expression found no `wanted` in the reply: what it found, and what the reply
    holds where its path stops (value_words.where_the_path_ends)."""
    what = "nothing" if found is None else f"a {type(found).__name__}"
    return (
        f"malformed response: {name} `{expression}` found {what}, not {wanted}, in the reply "
        f"{_excerpt(raw)} ({where_the_path_ends(expression, raw)})"
    )


def map_reply(response: Mapping[str, Any], raw: Any) -> dict[str, Any]:
    """The app's reply, read with the `target.response` expressions, in the contract's shape.

    `response` is the config's mapping as plain data: `answer`, optional `contexts`,
    `context` (`text`, `doc_id`, `source`, `score`) and `usage`. What an expression cannot
    find is a malformed response naming the expression and a piece of the reply."""

    def search(expression: str, data: Any, name: str) -> Any:
        return search_reply(expression, data, name)

    answer = search(response["answer"], raw, "answer")
    if not isinstance(answer, str):
        raise TargetError(_found_nothing("target.response.answer", response["answer"], answer, "text", raw))
    mapped: dict[str, Any] = {"answer": answer, "contexts": []}
    if response.get("contexts"):
        mapped["contexts"] = map_contexts(response, raw)
    if response.get("usage"):
        usage = search(response["usage"], raw, "usage")
        if usage is not None and not isinstance(usage, Mapping):
            raise TargetError(
                f"malformed response: target.response.usage `{response['usage']}` found a "
                f"{type(usage).__name__}, not an object"
            )
        mapped["usage"] = usage
    return mapped


def map_contexts(
    response: Mapping[str, Any], raw: Any, section: str = "target.response"
) -> list[dict[str, Any]]:
    """The contexts of a reply, read with `response["contexts"]` and `response["context"]`:
    the answer call's (`target.response`) or the search call's (`target.retrieve.response`)."""
    items = search_reply(response["contexts"], raw, "contexts", section=section)
    if not isinstance(items, list):  # a renamed or null key is no "no contexts": only [] is
        raise TargetError(_found_nothing(f"{section}.contexts", response["contexts"], items, "a list", raw))
    fields = response.get("context") or {}
    return [_context(fields, item, i, section) for i, item in enumerate(items, 1)]


CONTEXT_DEFAULTS = {"text": "text", "doc_id": "doc_id", "source": "source", "score": "score"}


def _context(fields: Mapping[str, Any], item: Any, number: int, section: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, default in CONTEXT_DEFAULTS.items():
        expression = fields.get(name) or default
        value = search_reply(
            expression, item, f"context.{name}", where=f" (context {number})", section=section
        )
        if name == "text" and not isinstance(value, str):
            found = "nothing" if value is None else f"a {type(value).__name__}"
            raise TargetError(
                f"malformed response: {section}.context.text `{expression}` found {found}, not text, "
                f"in context {number}: {_excerpt(item)}"
            )
        if name in ("doc_id", "source") and value is not None and not isinstance(value, str):
            value = (
                str(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else json.dumps(value)
            )
        out[name] = value
    return out


# The error path of a search: a JMESPath error at run time (a function given the wrong
# type, e.g. `join` on objects) is the reply not fitting the mapping, a target error the
# breaker counts, never `internal error: JMESPathTypeError`.

_JMESPATH_TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
    "expref": "an &expression",
    "array-string": "strings",
    "array-number": "numbers",
}
_WALK_LIMIT = 10_000  # values looked at to say where the offending one sits


def search_reply(
    expression: str, data: Any, field: str, *, where: str = "", section: str = "target.response"
) -> Any:
    """`expression` applied to `data`; TargetError naming `<section>.<field>`, the
    expression and the offending value's type (and where it sits) when it fails."""
    try:
        return compile_expression(expression).search(data)
    except JMESPathTypeError as exc:
        raise TargetError(
            f"malformed response: {type_error_words(field, exc, data, section)}{where}; "
            f"expression `{expression}`"
        ) from None
    except JMESPathError as exc:
        raise TargetError(
            f"malformed response: {section}.{field} `{expression}`: {' '.join(str(exc).split())[:300]}{where}"
        ) from None
    except RecursionError:
        raise TargetError(
            f"malformed response: {section}.{field} `{expression}`: the reply is nested too deeply{where}"
        ) from None


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
    return (
        "array"
        if isinstance(value, list)
        else "object"
        if isinstance(value, Mapping)
        else type(value).__name__
    )


def type_error_words(field: str, exc: JMESPathTypeError, data: Any, section: str = "target.response") -> str:
    """ "target.response.answer: join() needs strings, got an object at result.sources[0]"."""
    needs = " or ".join(_JMESPATH_TYPE_WORDS.get(t, t) for t in exc.expected_types)
    kind = jmespath_type(exc.current_value)
    got = _JMESPATH_TYPE_WORDS.get(kind, f"a {kind}") if kind != "null" else "null"
    path = path_of(exc.current_value, data)
    return f"{section}.{field}: {exc.function_name}() needs {needs}, got {got}" + (
        f" at {path}" if path else ""
    )


def path_of(value: Any, data: Any) -> str | None:
    """Where `value` sits in `data`, as a JMESPath-like path (`result.sources[0]`), when it
    is found among the first values looked at; None otherwise (e.g. a computed value)."""
    todo: list[tuple[Any, str]] = [(data, "")]
    seen = 0
    while todo and seen < _WALK_LIMIT:
        node, path = todo.pop(0)
        seen += 1
        if (node is value and path) or (
            path and not isinstance(node, (list, Mapping)) and type(node) is type(value) and node == value
        ):
            return path
        if isinstance(node, Mapping):
            todo.extend((child, f"{path}.{_key(key)}" if path else _key(key)) for key, child in node.items())
        elif isinstance(node, list):
            todo.extend((child, f"{path}[{i}]") for i, child in enumerate(node))
    return None


def _key(key: Any) -> str:
    text = str(key)
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) else json.dumps(text)
