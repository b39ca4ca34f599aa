"""The human report: markdown (PR comment, step summary) and standalone HTML.

Templates live in rag_ci/templates/. Every string printed is untrusted (answers, reasons
quoting them, ids and tags from the repository, model names and notices built from the
pull request's rag-ci.yml or from the baseline): one escaping helper per output format
makes it inert where it is printed:

- markdown: the escaping filters of rag_ci.core.reporting.escaping (`u`, `quote`, `url`,
  `ids`); numbers go through rag_ci.core.reporting.number_formats'. tests/unit/test_render.py
  walks the template and fails on an expression printed without one of them.
- HTML: Jinja's autoescaping; the only markup passed in is the chart, built by
  `score_delta_chart` from numbers and `html.escape`d ids.
- workflow commands (annotations) and step outputs: rag_ci.github.workflow.

The functions the templates call and the filters they use are registered where each is defined
(rag_ci.core.reporting.template_functions); the environment here is built from that registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jinja2

from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.comparison.judge_noise import confirmation_calls
from rag_ci.core.reporting import (
    alerts,
    answer_diff,
    deltas,
    escaping,
    number_formats,
    rows,
    stage_latency,
    view,
)
from rag_ci.core.reporting.answer_diff import word_diff
from rag_ci.core.reporting.escaping import code_span, escape_md, escape_notice, markdown_url
from rag_ci.core.reporting.number_formats import fmt_budget
from rag_ci.core.reporting.template_functions import FILTERS, GLOBALS, template_global
from rag_ci.core.reporting.view import Commits
from rag_ci.core.results import RunResult
from rag_ci.core.scoring.verdict import error_causes

__all__ = [
    "Commits",
    "code_span",
    "escape_md",
    "escape_notice",
    "fmt_budget",
    "html_chunks",
    "markdown_url",
    "render_html",
    "render_markdown",
    "render_not_evaluated",
    "score_delta_chart",
    "verdict_headline",
    "word_diff",
]

# The modules that define the templates' functions: importing one registers its functions
# (tests/unit/test_template_functions.py checks that none is left out of this list).
_TEMPLATE_MODULES = (alerts, answer_diff, deltas, escaping, number_formats, rows, stage_latency, view)

# Defined below the report, in the comparison and the verdict, which know nothing of templates.
template_global(confirmation_calls)
template_global(error_causes)


@lru_cache(maxsize=2)
def _environment(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("rag_ci", "templates"),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(FILTERS)
    env.globals.update(GLOBALS)
    return env


def verdict_headline(
    head: RunResult, comparison: Comparison | None, *, made_baseline: bool = False
) -> tuple[str, str]:
    """The verdict class and the headline: what kind of failure, leaks first. `made_baseline`: a
    run that replaces the baseline (on main, a re-baseline) compares with nothing on purpose."""
    if head.meta.broken:
        return "fail", "⛔ broken run: not a result"
    if comparison is None and made_baseline:
        overall = head.aggregates.overall
        return "pass", f"📌 new baseline: {overall.passed}/{overall.n} questions pass"
    if comparison is None:
        return "bootstrap", "🟡 no baseline to compare with"
    kinds = view.gate_kinds(comparison)
    # never "(1 accepted)": read as "of which"
    accepted = f" · {len(comparison.accepted)} accepted" if comparison.accepted else ""
    # A passing headline names big rises of latency or cost: a table's ⚠️ alone goes unread when
    # nothing else calls for reading on (a failing comment is read on; a breach is a reason above).
    rises = "".join(f" · {w}" for w in deltas.delta_warnings(comparison, head))
    if comparison.verdict == "fail":
        reasons = []
        if comparison.fail_on == "significant_drop":
            if comparison.leaking:  # a routing leak gates under every policy
                reasons.append(view.plural(len(comparison.leaking), "routing leak"))
            if comparison.significant_drop:
                reasons.append("significant pass-rate drop")
        elif comparison.gating:
            reasons.extend(kinds)
        if comparison.budget_breaches:
            reasons.append(view.plural(len(comparison.budget_breaches), "budget") + " exceeded")
        return "fail", "❌ " + " · ".join(reasons or kinds) + accepted
    if comparison.gating:
        why = (
            "gate disabled"
            if comparison.fail_on == "never"
            else f"not a significant drop: the gate is {comparison.fail_on}"
        )
        return "pass", f"⚠️ {' · '.join(kinds)} ({why}){accepted}{rises}"
    return "pass", f"✅ no regression{accepted}{rises}"


FOLDED_AFTER = 20  # rows of a group shown before the rest are collapsed under them

# Ever shorter renderings, tried in order until one fits: rows per table (None: all); `lean`
# leaves out the collapsed before/after (the rows, visible, matter more); `compact` every detail
# section. The ids of every question that fails the gate (or is accepted) are printed in all of
# them: rows go, names never do.
_SHORTENINGS = (
    (None, False, False),
    (50, False, False),
    (50, True, False),
    (20, True, False),
    (5, True, False),
    (0, True, False),
    (0, True, True),
)


def render_markdown(
    head: RunResult,
    comparison: Comparison | None = None,
    *,
    notice: str | None = None,
    links: dict[str, str] | None = None,
    trend: dict[str, Any] | None = None,
    report_url: str | None = None,
    report_path: str | None = None,
    max_chars: int = 60000,
    calibration: list[Any] | None = None,
    commits: Commits | None = None,
    measured: tuple[QuestionChange, ...] = (),
    summary_url: str | None = None,
    made_baseline: bool = False,
) -> str:
    """The markdown report, shortened to fit max_chars (rows first, then detail sections,
    never the ids of the questions that fail the gate); a hard cut with a note is the last resort.

    `trend` is rag_ci.core.comparison.history.trend_summary(...); `report_url` (the run's artifact or
    page) or `report_path` (a local file) is where the full HTML report is; `commits` what was
    compared; `measured` the judge-free regressions a broken run found (listed, not gating);
    `summary_url` the job summary with every row (a comment names it where it cuts rows);
    `made_baseline` a run that replaces the baseline (verdict_headline)."""
    verdict, headline = verdict_headline(head, comparison, made_baseline=made_baseline)
    template = _environment(False).get_template("report.md.j2")
    empty_index = alerts.empty_index_warning(head)  # once, not per shortening
    text = ""
    for row_limit, lean, compact in _SHORTENINGS:
        text = template.render(
            head=head,
            cmp=comparison,
            verdict=verdict,
            headline=headline,
            notice=notice,
            links=links or {},
            trend=trend,
            calibration=calibration or [],
            report_url=report_url,
            report_path=report_path,
            summary_url=summary_url,
            row_limit=row_limit,
            folded_after=FOLDED_AFTER,
            compact=compact,
            lean=lean,
            failing=[q for q in head.questions if not q.passed],
            commits=commits,
            measured=measured,
            empty_index=empty_index,
            this=(
                commits.head_label
                if commits and commits.head_label
                else "this PR"
                if head.meta.pr_number
                else "this run"
            ),
            params=head.meta.policy.metrics if head.meta.policy else {},
            accepted_file=(head.meta.policy.gate.get("accepted") if head.meta.policy else None)
            or "accepted.yml",
        )
        if len(text) <= max_chars:
            return text
    summary = f"[the job summary]({markdown_url(summary_url)})" if summary_url else "the step summary"
    note = f"\n\n_…report truncated to fit GitHub's comment limit; see {summary} or the HTML report._\n"
    return text[: max_chars - len(note)] + note


def render_not_evaluated(cause: str, *, run_url: str | None = None, commits: Commits | None = None) -> str:
    """What replaces the PR comment when a run fails before it can evaluate (a config error, a
    build step or target that fails, an unusable baseline): never an older verdict left standing."""
    return (
        _environment(False)
        .get_template("not_evaluated.md.j2")
        .render(cause=cause, run_url=run_url, commits=commits)
    )


def render_html(
    head: RunResult,
    comparison: Comparison | None = None,
    *,
    calibration: list[Any] | None = None,
    history: list[dict[str, Any]] | None = None,
    commits: Commits | None = None,
) -> str:
    """A standalone HTML page (no external assets) with the same content, the per-question
    chart and, given the history of main, its trend as charts (overall and per corpus)."""
    return "".join(html_chunks(head, comparison, calibration=calibration, history=history, commits=commits))


def html_chunks(
    head: RunResult,
    comparison: Comparison | None = None,
    *,
    calibration: list[Any] | None = None,
    history: list[dict[str, Any]] | None = None,
    commits: Commits | None = None,
) -> Iterator[str]:
    """`render_html`'s page in the pieces Jinja produces, for a writer to write as they come.

    The page of 50,000 questions is ~20 MB, but Jinja's `render` first holds it as ~1.5
    million small strings (~190 MiB); written piece by piece, it is never held at all."""
    from markupsafe import Markup

    from rag_ci.core.reporting.charts import score_delta_chart, trend_charts

    verdict, headline = verdict_headline(head, comparison)
    entries = (history or [])[-10:]
    return (
        _environment(True)
        .get_template("report.html.j2")
        .generate(
            head=head,
            cmp=comparison,
            verdict=verdict,
            headline=headline,
            chart=Markup(score_delta_chart(comparison, head)),
            calibration=calibration or [],
            trend_charts=Markup(trend_charts(entries)) if entries else None,
            trend_runs=len(entries),
            commits=commits,
            params=head.meta.policy.metrics if head.meta.policy else {},
        )
    )


def score_delta_chart(comparison: Comparison | None, head: RunResult, width: int = 640) -> str:
    from rag_ci.core.reporting.charts import score_delta_chart as chart

    return chart(comparison, head, width)
