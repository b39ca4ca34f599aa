"""The house's checks hold: lint, format, types and dead code, as configured in pyproject.toml.

Each runs the tool CONTRIBUTING.md names, on the whole repository, the way a developer or
pre-commit runs it; the failure message is the tool's own output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders import REPO


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is a dev dependency: pip install -e '.[dev]'"
    return found


def _run(*command: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def test_ruff_finds_nothing_to_lint():
    done = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_tree_is_formatted_as_ruff_format_writes_it():
    done = _run(_tool("ruff"), "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_mypy_passes_strict_on_the_core_and_at_the_default_level_elsewhere(tmp_path):
    done = _run(_tool("mypy"), "--no-incremental", "--cache-dir", str(tmp_path / "mypy"), timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_vulture_finds_no_dead_code_outside_the_allow_list():
    done = _run(_tool("vulture"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_dead_code_check_finds_a_function_only_a_test_calls(tmp_path):
    # The check is worth something only if it sees dead code: a module with a function that
    # nothing in the package calls is reported, and the allow-list does not hide it.
    (tmp_path / "lonely.py").write_text(
        "def used():\n    return 1\n\n\ndef never_called():\n    return used()\n"
    )
    done = _run(_tool("vulture"), str(tmp_path / "lonely.py"), str(REPO / "vulture_allowlist.py"))
    assert done.returncode == 3 and "never_called" in done.stdout, done.stdout + done.stderr


def test_pre_commit_runs_the_same_checks():
    done = _run(_tool("pre-commit"), "validate-config", ".pre-commit-config.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    config = (REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    hooks = set(re.findall(r"^\s+- id: (\S+)", config, flags=re.M))
    assert {"ruff-check", "ruff-format", "mypy", "vulture", "import-contracts", "generated-docs"} <= hooks
