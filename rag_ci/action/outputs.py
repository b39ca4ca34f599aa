"""What one action run leaves behind besides the PR comment: the report files in the
output folder, the regression annotations, the step outputs.

Formatting plus file writes and the runner's workflow commands; no REST calls here
(the comment body and its marker are rag_ci.github.comments').
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_ci.gate import Comparison, QuestionChange
from rag_ci.core.reporting.render import Commits, html_chunks
from rag_ci.core.scoring.results import RunResult
from rag_ci.github.workflow import Runner
from rag_ci.action.settings import Settings
from rag_ci.signals import interrupted, interrupted_signal
from rag_ci.storage import write_chunks_atomic, write_text_atomic

RESULTS_FILE = "results.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
COMPARISON_FILE = "comparison.json"
COMMENT_FILE = "comment.md"  # saved when the comment cannot be posted (fork PRs)
MAX_ANNOTATIONS = 50  # GitHub shows 10 per step anyway; the rest are in the report


@dataclass(frozen=True)
class Reports:
    markdown: Path
    html: Path
    comparison: Path | None


def write_reports(output_dir: Path, head: RunResult, comparison: Comparison | None, markdown: str, *,
                  calibration: list | None = None, history: list[dict[str, Any]] | None = None,
                  commits: Commits | None = None) -> Reports:
    md = output_dir / REPORT_MD
    html = output_dir / REPORT_HTML
    write_text_atomic(md, markdown)
    write_chunks_atomic(html, html_chunks(head, comparison, calibration=calibration, history=history, commits=commits))
    cmp_path = None
    if comparison is not None:
        cmp_path = output_dir / COMPARISON_FILE
        write_text_atomic(cmp_path, json.dumps(comparison.to_dict(), indent=2, default=str) + "\n")
    return Reports(md, html, cmp_path)


def report_interrupted(runner: Runner) -> int:
    """A cancelled job (the runner sends SIGINT, then SIGTERM): say so where the user looks,
    set `verdict: interrupted`, and return 128 + the signal: never 1, which means "regression"."""
    signal_name = interrupted_signal().name
    runner.error(f"rag-ci was interrupted by {signal_name} (a cancelled job?) before it finished: no verdict; re-run the job.",
                 title="rag-ci: interrupted")
    runner.set_outputs({"verdict": "interrupted"})
    return interrupted("no verdict; re-run the job (a CLI `rag-ci run` continues where it stopped with --resume)")


def annotate_regressions(runner: Runner, comparison: Comparison) -> None:
    """One `::error::` per question that fails the gate (regression, worse, routing leak),
    so they show on the run's summary page."""
    titled = [("RAG regression", c) for c in comparison.regressions] + [("RAG worse", c) for c in comparison.worse]
    titled += [("RAG routing leak", c) for c in comparison.leaks]
    for title, change in titled[:MAX_ANNOTATIONS]:
        runner.error(describe_regression(change), title=f"{title}: {change.id[:80]}")
    extra = len(titled) - MAX_ANNOTATIONS
    if extra > 0:
        runner.error(f"... and {extra} more questions that fail the gate; see the step summary.", title="RAG regressions")


def step_outputs(settings: Settings, verdict: str, comparison: Comparison | None, results: Path, reports: Reports,
                 comment_url: str) -> dict[str, str]:
    """The action's step outputs (action.yml), paths relative to the workspace."""
    return {
        "verdict": verdict,
        "regressions": str(len(comparison.regressions) if comparison else 0),
        "worse": str(len(comparison.worse) if comparison else 0),
        "gains": str(len(comparison.gains) if comparison else 0),
        "results-path": settings.relative_to_workspace(results),
        "report-path": settings.relative_to_workspace(reports.html),
        "comment-url": comment_url,
    }


def describe_regression(change: QuestionChange) -> str:
    corpora = ", ".join(change.corpora) or "no corpus"
    crossed = [m for m in change.metrics if m.crossed_down]
    what = "; ".join(f"{m.name} {_num(m.old)} → {_num(m.new)}" for m in crossed) or f"verdict {change.old_verdict or 'new'} → {change.new_verdict}"
    if change.worse_because and not crossed:
        what = f"{what} ({change.worse_because[:200]})"
    reason = " ".join((change.reason or "").split())
    if len(reason) > 300:
        reason = reason[:299] + "…"
    if reason and reason in what:  # "now errors: X" says the error already: once is enough
        reason = ""
    return f"{change.id} ({corpora}): {what}" + (f" — {reason}" if reason else "")


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
