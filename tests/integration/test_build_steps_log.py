"""The build steps' output: kept out of the log unless verbose, the tail of a
failing step always shown, a progress bar's redraws counted as one line."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from rag_ci.errors import RagCiError
from rag_ci.run.prepare import run_build_steps, verbose_from_env

# An ingest that draws a progress bar (carriage returns) and logs 1,500 lines.
INGEST = """
import sys
for i in range(101):
    sys.stdout.write(f"\\rindexing {i}%")
    sys.stdout.flush()
print()
for i in range(1500):
    print(f"chunk {i} embedded")
"""
FAILING = """
import sys
for i in range(30):
    print(f"step {i}")
sys.exit("no space left on device")
"""


def build(tmp_path, script: str, *, verbose: bool) -> str:
    (tmp_path / "step.py").write_text(script)
    log = io.StringIO()
    asyncio.run(
        run_build_steps(
            [f"{sys.executable} step.py"],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            log=log,
            verbose=verbose,
        )
    )
    return log.getvalue()


def test_a_build_steps_output_stays_out_of_the_log_unless_verbose(tmp_path):
    quiet = build(tmp_path, INGEST, verbose=False)
    assert "chunk 0 embedded" not in quiet and "indexing" not in quiet
    assert "; 1501 lines of output not shown (--verbose or RAG_CI_VERBOSE=1 shows them)" in quiet
    assert len(quiet.splitlines()) == 2  # the step, and its end

    verbose = build(tmp_path, INGEST, verbose=True)
    assert "[build] chunk 1499 embedded" in verbose
    # the bar's last drawing only
    assert "[build] indexing 100%\n" in verbose and "indexing 99%" not in verbose


def test_a_failing_step_shows_its_last_lines_even_when_quiet(tmp_path):
    with pytest.raises(RagCiError) as caught:
        build(tmp_path, FAILING, verbose=False)
    message = str(caught.value)
    assert message.startswith("build step failed (exit 1)")
    assert "step 29" in message and "no space left on device" in message


@pytest.mark.parametrize(
    "environ, verbose",
    [
        ({}, False),
        ({"RAG_CI_VERBOSE": "1"}, True),
        ({"RAG_CI_VERBOSE": "0"}, False),
        ({"RUNNER_DEBUG": "1"}, True),
    ],
)
def test_verbose_comes_from_rag_ci_verbose_or_a_debug_rerun(environ, verbose):
    assert verbose_from_env(environ) is verbose
