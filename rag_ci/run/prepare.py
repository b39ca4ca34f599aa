"""Before the run: the target's build steps, and the commit the run is of.

Build steps run in the project folder with the target's environment and user
(rag_ci/targets/processes.py); their output is quiet unless verbose.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from rag_ci.errors import RagCiError
from rag_ci.safety.logsafe import neutralise
from rag_ci.safety.redaction import Redactor
from rag_ci.targets.processes import OutputTail, permission_hint, target_process_kwargs

VERBOSE_VARIABLE = "RAG_CI_VERBOSE"


def verbose_from_env(environ: Mapping[str, str]) -> bool:
    """RAG_CI_VERBOSE=1, or a GitHub re-run with debug logging (RUNNER_DEBUG=1)."""
    return (
        environ.get(VERBOSE_VARIABLE, "").lower() in ("1", "true", "yes")
        or environ.get("RUNNER_DEBUG") == "1"
    )


def _last_redraw(line: str) -> str:
    """What a terminal shows of a line a progress bar redrew with carriage returns."""
    drawn = [part for part in line.split("\r") if part.strip()]
    return drawn[-1] if drawn else ""


async def run_build_steps(
    steps: list[str],
    cwd: Path,
    env: dict[str, str],
    log=sys.stderr,
    redact: Redactor | None = None,
    verbose: bool = False,
) -> None:
    """Run the shell build steps in order; a failing step stops the run with its output.

    Quiet unless `verbose`: a step's output (an ingest's progress bars can be thousands of
    lines) is kept as a tail, shown when the step fails. Verbose, it is shown one line
    late: each line is redacted with the next one in view, so a secret printed across a
    line break is masked in both halves. A line redrawn with carriage returns counts as
    its last drawing."""
    redact = redact or Redactor()
    for step in steps:
        print(neutralise(f"[rag-ci] build: {step}"), file=log, flush=True)
        tail = OutputTail(40)
        started = time.monotonic()
        process = await asyncio.create_subprocess_shell(
            step,
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            **target_process_kwargs(env, project_dir=cwd),
        )
        assert process.stdout is not None
        lines = redact.lines()
        count = 0

        def show(ready: list[str]) -> None:
            nonlocal count
            for line in ready:
                count += 1
                tail.add(line)  # noqa: B023 (called within this step, whose tail it is)
                if verbose:
                    print(neutralise(f"[build] {line}"), file=log, flush=True)

        async for raw in process.stdout:
            show(lines.feed(_last_redraw(raw.decode("utf-8", "replace").rstrip())))
        show(lines.flush())
        code = await process.wait()
        if code != 0:
            raise RagCiError(
                f"build step failed (exit {code}): {step}\n{tail.text(20)}"
                + permission_hint(tail.text(20), project_dir=cwd)
            )
        lines_of = f"{count} line{'s' if count != 1 else ''} of output"
        hidden = (
            ""
            if verbose or not count
            else f"; {lines_of} not shown (--verbose or {VERBOSE_VARIABLE}=1 shows them)"
        )
        print(f"[rag-ci] build step done in {time.monotonic() - started:.1f}s{hidden}", file=log, flush=True)


def git(root: Path, *args: str) -> str | None:
    """The command's output ("" when it printed nothing), or None when git failed or is missing."""
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_dirty(root: Path, sha: str | None) -> bool | None:
    """Whether tracked files differ from commit `sha` in the checkout at `root` (untracked
    files, like the output folder, do not count); None when that cannot be told."""
    if not sha or git(root, "rev-parse", "HEAD") != sha:
        return None
    status = git(root, "status", "--porcelain", "--untracked-files=no")
    return None if status is None else bool(status)
