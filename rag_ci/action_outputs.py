"""What one action run leaves behind: report files, annotations, the comment body.

Pure formatting plus file writes into the output folder; no REST calls here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_ci.core.compare import Comparison, QuestionChange
from rag_ci.core.render import COMMENT_MARKER, GITHUB_COMMENT_LIMIT, render_html
from rag_ci.core.results import RunResult
from rag_ci.github.workflow import Runner
from rag_ci.storage import write_text_atomic

RESULTS_FILE = "results.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
COMPARISON_FILE = "comparison.json"
COMMENT_FILE = "comment.md"  # saved when the comment cannot be posted (fork PRs)
MAX_ANNOTATIONS = 50  # GitHub shows 10 per step anyway; the rest are in the report
TRUNCATION_NOTE = "\n\n_…comment truncated to GitHub's 65,536-character limit; the step summary has the full report._\n"


@dataclass(frozen=True)
class Reports:
    markdown: Path
    html: Path
    comparison: Path | None


def write_reports(output_dir: Path, head: RunResult, comparison: Comparison | None, markdown: str, *,
                  calibration: list | None = None, history: list[dict[str, Any]] | None = None) -> Reports:
    md = output_dir / REPORT_MD
    html = output_dir / REPORT_HTML
    write_text_atomic(md, markdown)
    write_text_atomic(html, render_html(head, comparison, calibration=calibration, history=history))
    cmp_path = None
    if comparison is not None:
        cmp_path = output_dir / COMPARISON_FILE
        write_text_atomic(cmp_path, json.dumps(comparison.to_dict(), indent=2, default=str) + "\n")
    return Reports(md, html, cmp_path)


def comment_body(markdown: str) -> str:
    """The sticky comment: hidden marker first, then the report, within GitHub's limit."""
    body = f"{COMMENT_MARKER}\n{markdown}"
    if len(body) > GITHUB_COMMENT_LIMIT:
        body = body[: GITHUB_COMMENT_LIMIT - len(TRUNCATION_NOTE)] + TRUNCATION_NOTE
    return body


def untrusted_comment_body(text: str) -> str:
    """A comment body read from a PR run's artifact, made safe to post with a write token.

    In the fork-PR pattern the artifact comes from a run of the fork's code, so its text
    is the fork's to choose. Post it only when it is ours in shape (starts with the
    marker), cut to the limit, with every @mention neutralised (a zero-width space after
    `@` stops GitHub from notifying anyone).
    """
    if not text.startswith(COMMENT_MARKER):
        raise ValueError("the comment artifact does not start with the rag-ci marker; not posting it")
    text = re.sub(r"@(?=[A-Za-z0-9_-])", "@\u200b", text)
    return comment_body(text[len(COMMENT_MARKER):].lstrip("\n"))


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


def describe_regression(change: QuestionChange) -> str:
    corpora = ", ".join(change.corpora) or "no corpus"
    crossed = [m for m in change.metrics if m.crossed_down]
    what = "; ".join(f"{m.name} {_num(m.old)} → {_num(m.new)}" for m in crossed) or f"verdict {change.old_verdict or 'new'} → {change.new_verdict}"
    if change.worse_because and not crossed:
        what = f"{what} ({change.worse_because[:200]})"
    reason = " ".join((change.reason or "").split())
    if len(reason) > 300:
        reason = reason[:299] + "…"
    return f"{change.id} ({corpora}): {what}" + (f" — {reason}" if reason else "")


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
