"""What `rag-ci` imports before it does anything (issue 55: `rag-ci --version` imported the
comparison and rendering stack, ~1 s; 2–3 s on a loaded machine). Commands are imported when
called (rag_ci.cli.lazy). This reads the modules a fresh process imported (`python -X
importtime`), never a time: benchmarks/cli_startup.py measures the time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The stacks a command that only prints or edits the question set never needs.
HEAVY = (
    "rag_ci.core.comparison",
    "rag_ci.core.reporting",
    "rag_ci.gate",
    "rag_ci.run",
    "rag_ci.judges.deepeval_import",
    "deepeval",
    "jinja2",
    "numpy",
)


def imported_by(*args: str, cwd: Path = REPO) -> set[str]:
    """The modules `rag-ci ARGS` (its console script's code, in a fresh interpreter) imports."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from rag_ci.cli.__main__ import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("--help",),
        ("questions", "--help"),
        ("questions", "approve", "--help"),
        ("questions", "reject", "--help"),
        ("questions", "edit", "--help"),
    ],
)
def test_printing_the_version_or_a_help_imports_no_comparison_rendering_or_judge(args):
    modules = imported_by(*args)
    assert "rag_ci.cli" in modules  # the measure works: the CLI itself was imported
    assert (
        _heavy(modules) == []
    )  # before the fix: rag_ci.core.comparison.*, rag_ci.core.reporting.*, jinja2, …


def test_the_version_imports_no_command_module():
    modules = imported_by("--version")
    commands = sorted(m for m in modules if m.startswith("rag_ci.cli.") and m not in {"rag_ci.cli.__main__"})
    assert commands == ["rag_ci.cli.errors", "rag_ci.cli.help", "rag_ci.cli.lazy"]
