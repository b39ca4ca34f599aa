"""The layers stay honest: import-linter's contracts in pyproject.toml hold, and no module
imports itself back through others.

The pure core imports no adapter; targets, judges and GitHub never import each other;
the engine never imports GitHub; nothing imports the faces (cli, action); and inside a folder,
where the contracts do not look, no two modules depend on each other.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from builders import REPO


def test_the_import_contracts_in_pyproject_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    assert lint_imports, "import-linter is a dev dependency: pip install -e '.[dev]'"
    done = subprocess.run([lint_imports, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


# --- no circles: no module imports itself back through others ----------------------------------
#
# import-linter's contracts see layers and packages, not the modules inside one folder: two of
# them importing each other pass every contract. This check reads the imports off the source
# (ast), all of them: at module level, inside a function (a "lazy" import still ties the two
# modules together) and under `if TYPE_CHECKING:` (a type-only import is still a dependency).
# An import names its module: `from rag_ci.a import b` is an import of rag_ci.a.b when that is a
# module, else of rag_ci.a; the packages a dotted import runs through are not counted (every
# module of a package would otherwise "import" its __init__).

# Circles known when this check came, each with the work that removes it. Once removed, its entry
# must go too (test_the_known_circles_still_exist).
KNOWN_CIRCLES: set[frozenset[str]] = set()  # none: a circle is split before it lands


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, package: str = "rag_ci") -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports, read from the source under root/package."""
    files = {_module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, one level up per extra dot
                    anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            graph[name] |= {target for target in targets if target in files and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another (a strongly connected component of two or
    more), as one shortest circle through its first module: [a, b, ..., a]."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(module: str) -> None:  # Tarjan's; it recurses no deeper than there are modules
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = set()
            while (member := stack.pop()) != module:
                group.add(member)
            group.add(module)
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(_shortest_circle(graph, group) for group in groups)


def _shortest_circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    for module in queue:  # breadth first, inside the group: the first path back to start is shortest
        for imported in sorted(graph[module] & group):
            if imported == start:
                return [*paths[module], start]
            if imported not in paths:
                paths[imported] = [*paths[module], imported]
                queue.append(imported)
    raise AssertionError(f"{sorted(group)} is not a circle")


def test_no_module_imports_itself_back_through_others():
    found = [circle for circle in circles(import_graph(REPO)) if frozenset(circle) not in KNOWN_CIRCLES]
    assert found == [], "import circles (move what both need into a module of its own):\n" + "\n".join(
        " -> ".join(circle) for circle in found
    )


def test_the_known_circles_still_exist():
    # A circle removed leaves KNOWN_CIRCLES, so that it cannot come back unseen.
    existing = {frozenset(circle) for circle in circles(import_graph(REPO))}
    assert sorted(sorted(known) for known in KNOWN_CIRCLES - existing) == []


def test_the_circle_check_sees_every_kind_of_import(tmp_path: Path):
    modules = {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",  # module level ...
        "b.py": "def thing():\n    from pkg import a  # ... and back, lazily\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "d.py": "import pkg.e\n",
        "e.py": "from . import c\n",  # relative, the other way round: c -> d -> e -> c
        "f.py": "import pkg.a\nimport os\nfrom pkg import g\n",  # imports into a circle: not in it
        "g.py": "",
    }
    (tmp_path / "pkg").mkdir()
    for name, source in modules.items():
        (tmp_path / "pkg" / name).write_text(source)
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.f"] == {"pkg.a", "pkg.g"}
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.a"], ["pkg.c", "pkg.d", "pkg.e", "pkg.c"]]
