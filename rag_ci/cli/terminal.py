"""The report for a person at a terminal: verdict, counts, the questions that fail the gate,
latency and cost, budgets, what to do next; in colour, with no markdown to read through.

`run`, `compare` and `report` print it when stdout is a terminal and no `--format` was asked
for; `--format md` (and any output that is not a terminal: a pipe, a file, CI logs) keeps the
markdown. It says what the markdown says: the words come from the same view model
(rag_ci.core.reporting.view, .rows) and the same headline; only the layout is rich's.

Everything it prints that rag-ci did not write (ids, corpora, reasons, answers) is shown as
plain text: never read as rich markup, and with control characters (ESC first: a question
id must not move the cursor or recolour the terminal) written out as `\\xNN`.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rag_ci.core.base.text import visible_controls
from rag_ci.core.comparison.question_change import QuestionChange
from rag_ci.core.reporting import deltas, view
from rag_ci.core.reporting.render import fmt_budget
from rag_ci.core.reporting.render import verdict_headline as headline_of
from rag_ci.core.reporting.rows import metrics_cell, row_notes, why_cell
from rag_ci.core.results import RunResult
from rag_ci.gate import Comparison

ROWS = 50  # per table; the rest are named by id (the HTML report has every row)
PASTE_ON_TERMINAL = "`--format md` prints the entries to paste, docs/accepted.md says how"
_STYLE = {"fail": "bold red", "pass": "bold green", "bootstrap": "bold yellow"}


def plain(value: object, limit: int = 200) -> str:
    """Untrusted text for one terminal cell: one line, control characters visible, cut at `limit`."""
    text = " ".join(visible_controls(str(value if value is not None else ""), keep="").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def terminal_report(
    head: RunResult,
    comparison: Comparison | None,
    *,
    notice: str | None = None,
    width: int | None = None,
    color: bool = True,
) -> str:
    """The terminal view as text with ANSI colours (none with `color=False`)."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width or shutil.get_terminal_size((100, 24)).columns,
        force_terminal=color,
        color_system="standard" if color else None,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )
    for part in report_parts(head, comparison, notice=notice):
        console.print(part)
    return buffer.getvalue()


def report_parts(
    head: RunResult, comparison: Comparison | None, *, notice: str | None = None
) -> list[RenderableType]:
    verdict, headline = headline_of(head, comparison)
    parts: list[RenderableType] = [Text(f"rag-ci: {plain(headline, 400)}", style=_STYLE.get(verdict, "bold"))]
    if notice:
        parts.append(Text(plain(notice, 2000), style="yellow"))
    if head.meta.broken:
        parts.append(Text(f"broken: {plain(head.meta.broken, 2000)}", style="red"))
        parts.extend(_target_log(head, [head.meta.broken]))
    if comparison is None:
        parts.append(_run_counts(head))
        return parts
    parts.append(_counts(comparison))
    parts.extend(_gating_tables(comparison, head))
    errors = [
        c.reason or ""
        for c in view.regression_rows(comparison) + view.worse_rows(comparison)
        if c.new_verdict == "error"
    ]
    if errors and not head.meta.broken:
        parts.extend(_target_log(head, errors))
    parts.extend(_deltas(comparison, head))
    # The terminal shows no entries to paste: say where they are.
    next_step = view.next_line(comparison, verdict, broken=bool(head.meta.broken), paste=PASTE_ON_TERMINAL)
    if next_step:
        parts.append(Text.assemble(("Next: ", "bold"), plain(next_step, 1000)))
    return parts


def _target_log(head: RunResult, said: list[str]) -> list[RenderableType]:
    """The target's last log lines under its errors: what the error message hid (a traceback)."""
    log = view.target_log(head.meta.diagnostics, said)
    if not log:
        return []
    return [
        Text("the target's last log lines (redacted):", style="bold"),
        Text("\n".join(plain(line, view.LOG_LINE_CHARS) for line in log.splitlines()), style="dim"),
    ]


def _run_counts(head: RunResult) -> RenderableType:
    overall = head.aggregates.overall
    failing = [plain(q.id, 60) for q in head.questions if not q.passed]
    text = Text(
        f"{overall.passed}/{overall.n} pass, {overall.failed} fail, {overall.errors} error, "
        f"{overall.routing_errors} routing_error"
    )
    if failing:
        shown = ", ".join(failing[:ROWS]) + (
            f" and {len(failing) - ROWS} more" if len(failing) > ROWS else ""
        )
        text.append(f"\nnot passing: {shown}", style="red")
    return text


def _counts(cmp: Comparison) -> RenderableType:
    base_n, head_n = cmp.questions_n
    base_pass, head_pass = cmp.passed_n
    lines = Text(f"{head_pass}/{head_n} pass (baseline {base_pass}/{base_n})")
    kinds = view.gate_kinds(cmp) if cmp.gating else []
    if kinds:
        lines.append("\nfails the gate: ", style="bold").append(plain(" · ".join(kinds), 400), style="red")
        lines.append(f"\nwhere: {plain(view.where_line(cmp), 400)}")
    others = view.counts_line(cmp)
    if others:
        lines.append(f"\nalso: {plain(', '.join(others), 400)}")
    significance = view.significance_line(cmp)
    if significance:
        lines.append(f"\n{plain(significance, 400)}", style="dim")
    return lines


def _gating_tables(cmp: Comparison, head: RunResult) -> list[RenderableType]:
    params = head.meta.policy.metrics if head.meta.policy else {}
    tables: list[RenderableType] = []
    if view.leak_rows(cmp):
        tables.append(_table(f"Routing leaks ({len(view.leak_rows(cmp))})", view.leak_rows(cmp), params))
    for title, rows in view.stage_groups(view.regression_rows(cmp)):
        tables.append(_table(f"Regressions — {title} ({len(rows)})", rows, params))
    if view.worse_rows(cmp):
        tables.append(
            _table(
                f"Worse ({len(view.worse_rows(cmp))}): already failing, now worse",
                view.worse_rows(cmp),
                params,
            )
        )
    return tables


def _table(title: str, rows: Sequence[QuestionChange], params: dict) -> RenderableType:
    table = Table(title=Text(title, style="bold red"), title_justify="left", show_lines=False, expand=False)
    for column, style in (("question", "bold"), ("corpus", ""), ("failing", "red"), ("why", "")):
        table.add_column(column, style=style, overflow="fold")
    for change in rows[:ROWS]:
        notes = row_notes(change)
        question = Text(plain(change.id, 60))
        if notes:
            question.append("\n" + plain("; ".join(notes), 200), style="dim")
        table.add_row(
            question,
            Text(plain(", ".join(change.corpora), 60)),
            Text(plain(metrics_cell(change, params), 200)),
            Text(plain(why_cell(change), 300)),
        )
    if len(rows) <= ROWS:
        return table
    rest = ", ".join(plain(c.id, 60) for c in rows[ROWS:])
    return Group(table, Text(f"… and {len(rows) - ROWS} more: {rest}", style="dim"))


def _deltas(cmp: Comparison, head: RunResult) -> list[RenderableType]:
    parts: list[RenderableType] = []
    rows = deltas.delta_rows(cmp, head)
    if rows:
        table = Table(title=Text("Latency and cost", style="bold"), title_justify="left")
        for column in ("", "baseline", "this run", "change", ""):
            table.add_column(column)
        for row in rows:
            table.add_row(
                row.label,
                row.old,
                row.new,
                row.change,
                Text(row.flag, style="red" if "❌" in row.flag else "yellow"),
            )
        parts.append(table)
    if cmp.budgets:
        table = Table(title=Text("Budgets", style="bold"), title_justify="left")
        for column in ("budget", "limit", "baseline", "this run", "allowed", ""):
            table.add_column(column)
        for b in cmp.budgets:
            status = (
                ("over budget", "bold red")
                if b.breached
                else (f"within noise (lower bound {fmt_budget(b.bound, b.unit)})", "green")
                if b.within_noise
                else ("ok", "green")
                if b.allowed is not None
                else ("not checked (no baseline value)", "dim")
            )
            table.add_row(
                plain(b.name, 40),
                plain(b.limit, 20),
                fmt_budget(b.baseline, b.unit),
                fmt_budget(b.value, b.unit),
                fmt_budget(b.allowed, b.unit),
                Text(*status),
            )
        parts.append(table)
    return parts
