"""What the report's templates call and pipe through, registered where each function is defined.

A function a template calls by its name (`{{ plural(n, "question") }}`) is marked
`@template_global`; one a template pipes a value through (`{{ id | u }}`) is marked
`@template_filter("u")`. rag_ci.core.reporting.render imports every module that marks some and
builds Jinja's environment from the two tables here, so a new one is written in one place.
tests/unit/test_template_functions.py holds the tables and the templates to each other: every
name a template uses is registered, every one registered is used. (vulture counts a marked
function as used: pyproject.toml, [tool.vulture] ignore_decorators.)

This module imports nothing of rag-ci, so that any module of the report can import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

Function = TypeVar("Function", bound=Callable[..., Any])

FILTERS: dict[str, Callable[..., Any]] = {}
GLOBALS: dict[str, Callable[..., Any]] = {}


def template_global(function: Function) -> Function:
    """`function`, callable by its own name in every template."""
    _register(GLOBALS, function.__name__, function)
    return function


def template_filter(name: str) -> Callable[[Function], Function]:
    """The function, as the filter `name` in every template (`value | name`)."""

    def register(function: Function) -> Function:
        _register(FILTERS, name, function)
        return function

    return register


def _register(table: dict[str, Callable[..., Any]], name: str, function: Callable[..., Any]) -> None:
    # Two functions under one name: the later would silently replace the earlier in every template.
    known = table.get(name)
    if known is not None and _where(known) != _where(function):
        raise ValueError(f"two template functions named {name!r}: {_where(known)} and {_where(function)}")
    table[name] = function


def _where(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"
