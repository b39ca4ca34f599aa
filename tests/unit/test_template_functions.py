"""The report's template functions and its templates agree (rag_ci.core.reporting.template_functions).

A function or filter is registered where it is defined; nothing else lists it. So the tables
are held to the templates here: every function a template calls and every filter it uses is
registered (a name missing would only fail when a report reaches that line, StrictUndefined),
and every one registered is used by some template (a leftover would be dead code vulture
cannot see, since the decorator counts as a use).
"""

from __future__ import annotations

import ast
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes
from jinja2.defaults import DEFAULT_FILTERS, DEFAULT_NAMESPACE

from rag_ci.core.reporting import render
from rag_ci.core.reporting.template_functions import FILTERS, GLOBALS, template_global

TEMPLATES = Path(render.__file__).parents[2] / "templates"
PACKAGE = TEMPLATES.parent


def _sources() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(TEMPLATES.glob("*.j2"))}


def template_uses(sources: dict[str, str]) -> tuple[set[str], set[str], set[str]]:
    """Over all the templates: the names called as functions that no template defines (a macro,
    a `set`, a loop variable or a macro's parameter: an included template calls its includer's
    macros), every name read, and the filters used."""
    trees = [jinja2.Environment().parse(source) for source in sources.values()]
    defined = {"caller"}  # what Jinja hands a macro called with a {% call %} block
    read: set[str] = set()
    called: set[str] = set()
    filters: set[str] = set()
    for tree in trees:
        defined |= {macro.name for macro in tree.find_all(nodes.Macro)}
        defined |= {name.name for name in tree.find_all(nodes.Name) if name.ctx in ("store", "param")}
        read |= {name.name for name in tree.find_all(nodes.Name) if name.ctx == "load"}
        called |= {c.node.name for c in tree.find_all(nodes.Call) if isinstance(c.node, nodes.Name)}
        filters |= {f.name for f in tree.find_all(nodes.Filter)}
    return called - defined, read, filters


def test_the_templates_are_found():
    assert {"report.md.j2", "report.html.j2", "audit.html.j2", "drafts.html.j2"} <= set(_sources())


def test_every_function_a_template_calls_is_registered():
    called, _, _ = template_uses(_sources())
    assert sorted(called - set(GLOBALS) - set(DEFAULT_NAMESPACE)) == []


def test_every_registered_function_is_called_by_some_template():
    _, read, _ = template_uses(_sources())
    assert sorted(set(GLOBALS) - read) == []


def test_every_filter_a_template_uses_is_registered_or_jinjas_own():
    _, _, filters = template_uses(_sources())
    assert sorted(filters - set(FILTERS) - set(DEFAULT_FILTERS)) == []


def test_every_registered_filter_is_used_by_some_template():
    _, _, filters = template_uses(_sources())
    assert sorted(set(FILTERS) - filters) == []


def test_registered_names_do_not_shadow_jinjas_own():
    assert sorted(set(FILTERS) & set(DEFAULT_FILTERS)) == []
    assert sorted(set(GLOBALS) & set(DEFAULT_NAMESPACE)) == []


@pytest.mark.parametrize("autoescape", [False, True])
def test_the_environment_has_every_registered_function_and_compiles_every_template(autoescape):
    env = render._environment(autoescape)
    assert {name: env.filters[name] for name in FILTERS} == FILTERS
    assert {name: env.globals[name] for name in GLOBALS} == GLOBALS
    for name in _sources():
        env.get_template(name)  # a filter Jinja does not know fails here, when the template compiles


def _registering_modules() -> set[str]:
    # A module registers by applying template_global or template_filter (as a decorator or a call).
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        applied = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        } | {
            decorator.id
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            for decorator in node.decorator_list
            if isinstance(decorator, ast.Name)
        }
        if applied & {"template_global", "template_filter"} and path.name != "template_functions.py":
            found.add(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
    return found


def test_every_module_that_registers_is_imported_by_the_renderer():
    # Registration happens on import: a module the renderer does not import would leave its
    # functions out of the environment whenever nothing else happened to import it first.
    imported = {module.__name__ for module in render._TEMPLATE_MODULES} | {render.__name__}
    found = _registering_modules()
    assert "rag_ci.core.reporting.escaping" in found  # the scan sees `@template_filter("u")`
    assert sorted(found - imported) == []


def test_the_check_sees_an_unregistered_call_an_unknown_filter_and_an_unused_registration():
    sources = {
        "t.j2": "{% macro row(x) %}{{ x | u }}{% endmacro %}{% set n = 1 %}"
        "{{ row(n) }}{{ not_registered(n) | no_such_filter }}{% for q in range(n) %}{{ plural(q, 'a') }}{% endfor %}",
    }
    called, read, filters = template_uses(sources)
    assert called - set(GLOBALS) - set(DEFAULT_NAMESPACE) == {"not_registered"}
    assert filters - set(FILTERS) - set(DEFAULT_FILTERS) == {"no_such_filter"}
    assert "gate_kinds" in set(GLOBALS) - read


def test_two_functions_under_one_name_are_refused():
    def plural(n: int, word: str) -> str:  # the report's own `plural` is already registered
        return word

    with pytest.raises(ValueError, match="two template functions named 'plural'"):
        template_global(plural)
    assert GLOBALS["plural"].__module__ == "rag_ci.core.reporting.view"
