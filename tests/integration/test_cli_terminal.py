"""`rag-ci run`/`compare`/`report` at a terminal: the terminal view, not the PR comment's markdown.

The CLI runs as a process on a real pseudo-terminal (pty.openpty), as a person starts it; a
pipe or a file, and `--format md`, keep the markdown byte for byte."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV", "RAG_CI_TARGET_USER")
    return {
        **{k: v for k, v in os.environ.items() if k in keep},
        "PYTHONPATH": str(REPO),
        "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
        "COLUMNS": "120",
        "LINES": "50",
        "TERM": "xterm-256color",
    }


def on_a_terminal(args: list[str], cwd: Path, extra: dict[str, str] | None = None) -> tuple[int, str]:
    """`python -m rag_ci.cli ARGS` with stdin, stdout and stderr on a pseudo-terminal; (exit code, what it showed)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "rag_ci.cli", *args],
        cwd=cwd,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env(), **(extra or {})},
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = process.wait(timeout=120)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def piped(
    args: list[str], cwd: Path, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", *args],
        cwd=cwd,
        env={**env(), **(extra or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The example project, with `regressed.json`: its run with a deliberate regression."""
    folder = tmp_path_factory.mktemp("term") / "example"
    shutil.copytree(REPO / "examples", folder, ignore=shutil.ignore_patterns(".index", "out", "__pycache__"))
    piped(["run", "-o", "regressed.json", "--no-progress"], folder, {"EXAMPLE_RAG_REGRESSION": "chunking"})
    return folder


def assert_no_markdown(text: str) -> None:
    plain = ANSI.sub("", text)
    assert not re.search(r"\\[+|*_#`\[\]<>~-]", plain), "backslash-escaped markdown on the terminal"
    for markup in ("<details>", "<summary>", "| question |", "|---", "**", "&gt;", "&#64;"):
        assert markup not in plain


def test_run_with_a_baseline_on_a_terminal_prints_the_terminal_view_without_markdown(example):
    code, shown = on_a_terminal(
        ["run", "--baseline", "baseline/results.json", "-o", "head.json", "--no-progress"],
        example,
        {"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert code == 1, shown
    assert "\x1b[" in shown  # in colour
    assert_no_markdown(shown)
    plain = ANSI.sub("", shown)
    assert re.search(r"rag-ci: ❌ \d+ regressions", plain)  # the verdict line
    assert "fails the gate:" in plain and "Regressions — Retrieval" in plain and "Latency and cost" in plain
    assert "DU2-CALIBRATION" in plain and "Next: " in plain


def test_format_md_and_a_pipe_keep_the_markdown_byte_for_byte(example):
    args = ["compare", "baseline/results.json", "regressed.json"]

    through_a_pipe = piped(args, example)
    code, on_terminal = on_a_terminal([*args, "--format", "md"], example)
    explicit = piped([*args, "--format", "md"], example)

    assert through_a_pipe.returncode == code == 1
    assert through_a_pipe.stdout.startswith("## rag-ci") and "| question |" in through_a_pipe.stdout
    # (stderr is empty: nothing else on the terminal)
    assert through_a_pipe.stdout == explicit.stdout == on_terminal


def test_report_on_a_terminal_is_the_terminal_view_too(example):
    code, shown = on_a_terminal(["report", "regressed.json", "--baseline", "baseline/results.json"], example)

    assert code == 1
    assert_no_markdown(shown)
    assert "Regressions — Retrieval" in ANSI.sub("", shown)
