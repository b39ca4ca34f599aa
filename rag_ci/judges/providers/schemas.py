"""JSON Schemas for DeepEval's reply models, in the strict form providers accept.

Providers differ in how much JSON Schema they take; the common subset is: no
`$ref` (inlined), every property required, no extra properties, no `default` or
`title` noise. OpenAI's strict structured outputs need exactly that; Anthropic
tools, Gemini and Ollama accept it.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from pydantic import BaseModel

_DROP = ("title", "default", "description")


@functools.cache
def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Cached per class (metrics ask for the same few schemas thousands of times); do not mutate."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return _strict(_inline(raw, defs))


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return _inline(copy.deepcopy(defs[name]), defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items() if k not in _DROP}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def parse_json_text(text: str | None) -> Any:
    """Parse a reply that should be JSON; tolerate a ```json fence or prose around one object."""
    if text is None:
        raise ValueError("the model returned no text")
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    start, end = stripped.find("{"), stripped.rfind("}")
    if start == -1 or end <= start:
        raise ValueError(f"the reply is not JSON: {stripped[:120]!r}")
    try:
        return json.loads(stripped[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg}): {stripped[:120]!r}") from None
