"""YAML parsing that remembers where things are, so errors can name file and line."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError

from rag_ci.errors import ValidationError


def load_yaml(text: str, filename: str) -> Any:
    """Parse YAML text; syntax errors become a ValidationError naming file and line."""
    yaml = YAML(typ="rt")
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else "?"
        problem = exc.problem or exc.context or "invalid YAML"
        raise ValidationError([f"{filename}:{line}: invalid YAML: {problem}"]) from None


def load_yaml_fast(text: str) -> Any:
    """Plain data from YAML text without position marks, or None when it does not parse.

    ruamel's safe loader is faster than the round-trip loader `load_yaml` uses for line
    numbers: about 1.4x in pure Python, 4-5x with the C parser of `ruamel.yaml.clib`
    when installed (a 5,000-question set: 8-10 s -> 6-7 s, or 2-3 s). Same YAML 1.2
    resolver, so the same values. Callers validate this first and re-parse with
    `load_yaml` only when there is a problem to report with its line.
    """
    try:
        return YAML(typ="safe").load(text)
    except Exception:  # noqa: BLE001 - any failure: the caller takes the slow path, which reports it
        return None


def line_of(node: Any, key: Any = None) -> int | None:
    """1-based line of `node` (or of `node[key]`) when ruamel recorded it."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return lc.line + 1
        if isinstance(node, CommentedMap):
            return lc.key(key)[0] + 1
        if isinstance(node, CommentedSeq):
            return lc.item(key)[0] + 1
    except (KeyError, IndexError, TypeError):
        return lc.line + 1
    return None


def to_plain(node: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists (for pydantic)."""
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    return node


def where(filename: str, node: Any, loc: tuple[Any, ...]) -> str:
    """`file:line` for the deepest node along a pydantic error location."""
    line = line_of(node)
    current = node
    for part in loc:
        try:
            line = line_of(current, part) or line
            current = current[part]
        except (KeyError, IndexError, TypeError):
            break
    return f"{filename}:{line}" if line else filename
