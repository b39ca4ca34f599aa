"""What `rag-ci validate` checks of the target without starting it: that `run` could start it
(issue 55: `init` wrote `kind: python` with `entry: app:answer`, no such module, and `validate`
said ok; `run` then stopped at exit 2).

- `python`: the entry's module is a file of the target's search path (rag-ci.yml's folder and
  `target.path`) that defines the function at its top level, or a module the target's
  interpreter finds (an installed package). The module is found, its source read, never run:
  importing an app can load models and indexes, which is the run's to do.
- `command`, and `http` with `start`: the program is on the target's PATH or a file beside
  rag-ci.yml, and a Python script it is given (`python rag.py`) is there.
- `docker`: the build context is a folder and the Dockerfile a file in it.
- `docker` and `http`: `path` / `url` does not hold the placeholder `init` writes when the app's code declares no question route (`PLACEHOLDER_PATH`:
  init never makes a route up, and this line says which line of rag-ci.yml to fill in).

A program or interpreter a build step makes (`target.build`, a venv) may not exist yet: that is
a warning, not an error.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# What `rag-ci init` writes as a docker target's `path` when the app's code declares no POST
# route that answers questions (rag_ci.cli.init_targets): a path, so the config parses, that
# validate refuses until the user writes the real one.
PLACEHOLDER_PATH = "/FILL-IN-the-route-that-answers-questions"


def target_problems(
    target: Any, root: Path, environ: Mapping[str, str] | None = None, config_path: Path | None = None
) -> tuple[list[str], list[str]]:
    """(errors, warnings) of the target config `target` of the project in folder `root`
    (`config_path`, its rag-ci.yml: errors name the line to fix)."""
    environ = os.environ if environ is None else environ
    path = target.env.get("PATH") or os.path.dirname(sys.executable) + os.pathsep + environ.get(
        "PATH", os.defpath
    )
    built = bool(getattr(target, "build", None))
    errors: list[str] = []
    if target.kind == "python":
        errors += _entry_problems(target, root, path)
    # No build step writes rag-ci.yml: its placeholder is an error with a build step too.
    placeholder = placeholder_problems(target, config_path or root / "rag-ci.yml")
    if target.kind == "docker":
        errors += _dockerfile_problems(target, root)
    program = (
        target.command
        if target.kind == "command"
        else getattr(target, "start", None)
        if target.kind == "http"
        else None
    )
    if program:
        field = "target.command" if target.kind == "command" else "target.start"
        errors += _program_problems(program, field, root, path)
    if built:  # a build step may make what is missing: said, not refused
        return placeholder, [f"{e} (unless a build step makes it)" for e in errors]
    return placeholder + errors, []


def _entry_problems(target: Any, root: Path, path: str) -> list[str]:
    module, _, function = target.entry.partition(":")
    folders = [root, *(root / p for p in target.path)]
    relative = Path(*module.split("."))
    for folder in folders:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return _function_problems(candidate, target.entry, function)
    interpreter = _interpreter(target.python, root, path)
    if interpreter is not None and _installed(interpreter, module, folders):
        return []
    where = ", ".join(str(f) for f in folders)
    return [
        f"target.entry {target.entry}: no module {module} ({relative}.py) in {where}"
        + ("" if interpreter is None else f", nor installed for {interpreter}")
        + "; name a module of your app (`module:function`), or add its folder to target.path"
    ]


def _function_problems(source: Path, entry: str, function: str) -> list[str]:
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []  # the worker's import reports it with the interpreter's own words
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return []  # a star import may define it
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if function in names or "__getattr__" in names or not function:
        return []
    return [f"target.entry {entry}: {source} defines no {function} at its top level"]


def _interpreter(setting: str | None, root: Path, path: str) -> str | None:
    if setting is None:
        return sys.executable
    if "/" in setting:
        candidate = root / setting
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which(setting, path=path)


def _installed(interpreter: str, module: str, folders: list[Path]) -> bool:
    """The interpreter finds the module (an installed package), without importing its code."""
    probe = (
        "import importlib.util, sys\n"
        f"sys.path[:0] = {[str(f) for f in folders]!r}\n"
        f"name = {module!r}\n"
        "top = name.split('.')[0]\n"
        "sys.exit(0 if importlib.util.find_spec(top) is not None else 1)\n"
    )
    try:
        done = subprocess.run([interpreter, "-c", probe], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _program_problems(command: list[str], field: str, root: Path, path: str) -> list[str]:
    program = command[0]
    if "/" in program:
        found = (root / program) if not os.path.isabs(program) else Path(program)
        if not (found.is_file() and os.access(found, os.X_OK)):
            return [f"{field}: {program} is not an executable file ({found})"]
    elif shutil.which(program, path=path) is None:
        return [f"{field}: no program {program} on the target's PATH"]
    script = command[1] if len(command) > 1 else ""
    if Path(program).name.startswith("python") and script.endswith(".py") and not (root / script).is_file():
        return [
            f"{field}: {program} is given {script}, which is not a file beside rag-ci.yml ({root / script})"
        ]
    return []


def _dockerfile_problems(target: Any, root: Path) -> list[str]:
    context = root / target.context
    if not context.is_dir():
        return [f"target.context {target.context}: no such folder ({context}); the build context is a folder"]
    dockerfile = context / target.dockerfile
    if not dockerfile.is_file():
        return [
            f"target.dockerfile {target.dockerfile}: no such file in the build context ({dockerfile}); "
            "write it, or point target.dockerfile (relative to target.context) at yours"
        ]
    return []


def placeholder_problems(target: Any, config_path: Path) -> list[str]:
    """The placeholder route `init` wrote, still in `config_path`: one error naming its line (`run`
    refuses it as `validate` does, before anything is built)."""
    field = {"docker": "path", "http": "url"}.get(target.kind)
    if field is None or PLACEHOLDER_PATH not in getattr(target, field):
        return []
    try:
        lines = config_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    line = next((n for n, text in enumerate(lines, 1) if PLACEHOLDER_PATH in text), None)
    where = f"{config_path}:{line}" if line else str(config_path)
    return [
        f"{where}: target.{field} holds the placeholder `rag-ci init` wrote (no POST route that answers questions "
        "was found in the app's code): fill in the route your app answers questions on, e.g. /query"
    ]
