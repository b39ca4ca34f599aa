"""What one action run leaves behind besides the PR comment: the report files in the
output folder, the job summary's report, the step outputs (the annotations are
rag_ci.action.annotations').

Formatting plus file writes and the runner's workflow commands; no REST calls here
(the comment body and its marker are rag_ci.github.comments').
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_ci.action.settings import Settings
from rag_ci.core.reporting.junit import JUNIT_FILE, render_junit
from rag_ci.core.reporting.render import Commits, html_chunks
from rag_ci.core.results import RunResult
from rag_ci.files.atomic import write_chunks_atomic, write_text_atomic
from rag_ci.gate import Comparison
from rag_ci.github.workflow import Runner
from rag_ci.runtime.signals import interrupted, interrupted_signal

RESULTS_FILE = "results.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
COMPARISON_FILE = "comparison.json"
COMMENT_FILE = "comment.md"  # saved when the comment cannot be posted (fork PRs)
# GitHub's limit for one step's summary is 1 MiB (of UTF-8); some room is left for the
# audit sample's lines and the blank lines between parts.
SUMMARY_BYTES = 1024 * 1024 - 8 * 1024


@dataclass(frozen=True)
class Reports:
    markdown: Path
    html: Path
    comparison: Path | None


def write_reports(
    output_dir: Path,
    head: RunResult,
    comparison: Comparison | None,
    markdown: str,
    *,
    calibration: list | None = None,
    history: list[dict[str, Any]] | None = None,
    commits: Commits | None = None,
    junit: bool = False,
) -> Reports:
    md = output_dir / REPORT_MD
    if junit:  # the action's `junit` input: for a JUnit reader after the step (docs/other-ci.md)
        write_text_atomic(output_dir / JUNIT_FILE, render_junit(head, comparison))
    html = output_dir / REPORT_HTML
    write_text_atomic(md, markdown)
    write_chunks_atomic(
        html, html_chunks(head, comparison, calibration=calibration, history=history, commits=commits)
    )
    cmp_path = None
    if comparison is not None:
        cmp_path = output_dir / COMPARISON_FILE
        write_text_atomic(cmp_path, json.dumps(comparison.to_dict(), indent=2, default=str) + "\n")
    return Reports(md, html, cmp_path)


def report_interrupted(runner: Runner) -> int:
    """A cancelled job (the runner sends SIGINT, then SIGTERM): say so where the user looks,
    set `verdict: interrupted`, and return 128 + the signal: never 1, which means "regression"."""
    signal_name = interrupted_signal().name
    runner.error(
        f"rag-ci was interrupted by {signal_name} (a cancelled job?) before it finished: no verdict; re-run the job.",
        title="rag-ci: interrupted",
    )
    runner.set_outputs({"verdict": "interrupted"})
    return interrupted(
        "no verdict; re-run the job (a CLI `rag-ci run` continues where it stopped with --resume)"
    )


def summary_report(render: Callable[[int], str], budget: int = SUMMARY_BYTES) -> str:
    """The report for the job summary: the whole of it (every regression row the comment's
    60,000 characters had to cut) when it fits GitHub's 1 MiB, else shortened by the report's
    own rules to fit. `render(max_chars)` renders it; characters are not bytes, so the limit
    shrinks until the UTF-8 text fits."""
    limit = budget
    text = render(limit)
    for _ in range(5):
        size = len(text.encode("utf-8"))
        if size <= budget:
            # Cut to fit (over 1 MiB): the note must not send the reader to the summary it is in.
            return text.replace("see the step summary or the HTML report", "see the HTML report")
        limit = max(1000, int(limit * budget / size * 0.97))
        text = render(limit)
    return text.encode("utf-8")[:budget].decode("utf-8", "ignore")


def step_outputs(
    settings: Settings,
    verdict: str,
    comparison: Comparison | None,
    results: Path,
    reports: Reports,
    comment_url: str,
) -> dict[str, str]:
    """The action's step outputs (action.yml), paths relative to the workspace."""
    return {
        "verdict": verdict,
        "regressions": str(len(comparison.regressions) if comparison else 0),
        "worse": str(len(comparison.worse) if comparison else 0),
        "gains": str(len(comparison.gains) if comparison else 0),
        "results-path": settings.relative_to_workspace(results),
        "report-path": settings.relative_to_workspace(reports.html),
        # comparison.json (Comparison.to_dict) in the output folder; empty when nothing was compared.
        "comparison-path": settings.relative_to_workspace(reports.comparison) if reports.comparison else "",
        "comment-url": comment_url,
    }
