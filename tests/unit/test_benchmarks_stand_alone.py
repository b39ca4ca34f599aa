"""benchmarks/ imports rag-ci and its own simulators, never the test suite (tests may import benchmarks).
Reading the suite's documentation fixtures as data (benchmarks/draft_quality.py) imports nothing."""

from __future__ import annotations

import ast

import pytest

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
        on_path = "sys.path" in source and ('"tests"' in source or "'tests'" in source)
        if bad or on_path:
            offenders[path.name] = sorted(bad) or ["puts tests/ on sys.path"]
    assert offenders == {}


def test_a_benchmark_that_puts_the_tests_on_sys_path_is_caught(tmp_path, monkeypatch):
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "sneaky.py").write_text(
        'import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).parent.parent / "tests"))\n'
    )
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    with pytest.raises(AssertionError, match="sneaky.py"):
        test_no_benchmark_imports_the_tests_or_their_fakes()
