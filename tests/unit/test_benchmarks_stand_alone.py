"""benchmarks/ imports rag-ci and its own simulators, never the test suite (tests may import benchmarks)."""

from __future__ import annotations

import ast

from builders import REPO


def imported_modules(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_no_benchmark_imports_the_tests_or_their_fakes():
    offenders = {}
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        bad = {
            m
            for m in imported_modules(ast.parse(source))
            if m.split(".")[0] in ("tests", "fakes", "builders", "conftest")
        }
        if bad or '"tests"' in source or "'tests'" in source:
            offenders[path.name] = sorted(bad) or ["puts tests/ on sys.path"]
    assert offenders == {}
