"""The human report: markdown (PR comment, step summary) and standalone HTML.

Templates live in rag_ci/templates/. Every string printed is untrusted (answers, reasons
quoting them, ids and tags from the repository, model names and notices built from the
pull request's rag-ci.yml or from the baseline): one escaping helper per output format
makes it inert where it is printed:

- markdown: `escape_md` (filter `u`), `escape_notice` (filter `quote`, a block quote that
  keeps rag-ci's own `code` spans), `markdown_url` (filter `url`, link targets rag-ci made);
  numbers go through the numeric filters. tests/unit/test_render.py walks the template and
  fails on an expression printed without one of them.
- HTML: Jinja's autoescaping; the only markup passed in is the chart, built by
  `score_delta_chart` from numbers and `html.escape`d ids.
- workflow commands (annotations) and step outputs: rag_ci.github.workflow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jinja2

from rag_ci.core.base.text import INVISIBLE
from rag_ci.core.comparison.compare import Comparison, Delta, QuestionChange
from rag_ci.core.comparison.judge_noise import confirmation_calls
from rag_ci.core.comparison.stats import format_p as fmt_p
from rag_ci.core.comparison.stats import format_pp as fmt_pp
from rag_ci.core.reporting import alerts, deltas, rows, view
from rag_ci.core.reporting.deltas import ms_text
from rag_ci.core.reporting.view import Commits
from rag_ci.core.results import RunResult
from rag_ci.core.scoring.verdict import cut_at_word, error_causes

__all__ = [
    "Commits",
    "escape_md",
    "escape_notice",
    "html_chunks",
    "markdown_url",
    "render_html",
    "render_markdown",
    "render_not_evaluated",
    "score_delta_chart",
    "word_diff",
]

# Brackets are escaped, so parentheses and `!` can never complete a link or an image.
_MD_SPECIALS = "\\`*_{}[]#+|~<>"


# Bidi and zero-width controls reorder or hide what the reader sees, C0/C1 controls are
# nothing to show: each is written as a visible `<U+202E>` (in inline code: `\u202e`).
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f" + INVISIBLE.pattern[1:-1] + "]")

# What GitHub turns into a link by itself (GFM's extended autolinks).
_BARE_URL = re.compile(r"(?i)(?:(?:https?|ftp)://|www\.)\S+")


def code_span(text: str, *, in_table: bool = True) -> str:
    """`text` as inline code: shown as typed, never a link, a mention or markup. The fence is
    longer than any backtick run inside; in a table cell `|` would still end the cell."""
    text = _UNSEEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def _escape_inline(text: str, *, in_table: bool = True) -> str:
    out: list[str] = []
    position = 0
    for url in _BARE_URL.finditer(text):
        out.append(_escape_chars(text[position : url.start()]))
        out.append(code_span(url.group(), in_table=in_table))
        position = url.end()
    out.append(_escape_chars(text[position:]))
    return "".join(out)


def escape_md(text: Any, limit: int = 200) -> str:
    """Untrusted text made inert for a GitHub markdown table cell.

    One line, HTML-escaped, markdown punctuation backslashed, `@` written as an
    entity so nobody gets mentioned, bare URLs as inline code so they are not
    links, cut at `limit` characters.
    """
    if text is None:
        return ""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = cut_at_word(flat, limit)  # never inside an id or a URL (cut short, a link to elsewhere)
    return _escape_inline(flat)


def escape_notice(text: Any, limit: int = 2000) -> str:
    """A notice (several lines, built from config values, error messages and the baseline)
    for a `> ` block quote: each line escaped like `escape_md`, except that a `backticked`
    part stays inline code (inert by itself), so rag-ci's own notices keep their formatting."""
    if text is None:
        return ""
    lines = []
    for line in view.whole_lines(str(text), limit):
        parts = " ".join(line.split()).split("`")
        if len(parts) % 2 == 0:  # an unpaired backtick: the last one is plain text
            parts[-2:] = [parts[-2] + "`" + parts[-1]]
        rendered = [
            code_span(p, in_table=False) if i % 2 and p else _escape_inline(p, in_table=False)
            for i, p in enumerate(parts)
        ]
        if "".join(parts).strip():
            lines.append("".join(rendered))
    return "\n> ".join(lines)


def markdown_url(url: Any) -> str:
    """A link target rag-ci built (run and artifact URLs): http(s) only, nothing that ends it."""
    text = str(url or "")
    if not re.match(r"(?i)https?://", text):
        return "#"
    return re.sub(r"[\s()<>\[\]`\\\"']", lambda m: f"%{ord(m.group()):02X}", text)


def _escape_chars(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        if char == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(char)  # inside a word (hit_at_k) an underscore never starts emphasis
        elif char == "&":
            out.append("&amp;")
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        elif char == "@":
            out.append("&#64;")
        elif char in _MD_SPECIALS:
            out.append("\\" + char)
        elif not char.isprintable() and _UNSEEN.match(char):
            out.append(f"&lt;U+{ord(char):04X}&gt;")
        else:
            out.append(char)
    return "".join(out)


def fmt_num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float, text: str) -> str:
    # One minus sign everywhere, the true one; a change that rounds to nothing is ±0.
    return ("+" if value > 0 else "−" if value < 0 else "±") + text.lstrip("-")


def fmt_delta(delta: Delta, digits: int = 2, unit: str = "") -> str:
    if delta.old is None or delta.new is None:
        return "–"
    change = round(delta.new, digits) - round(delta.old, digits)  # from the values displayed beside it
    return _signed(round(change, digits), f"{abs(change):.{digits}f}{unit}")


def fmt_ms(seconds: float | None) -> str:
    return ms_text(seconds)[1]


def fmt_ms_delta(delta: Delta) -> str:
    """A latency change in ms, from the latencies displayed beside it."""
    (old, _), (new, _) = ms_text(delta.old), ms_text(delta.new)
    if old is None or new is None:
        return "–"
    change = new - old
    return _signed(change, ms_text(abs(change), delta_of=True, like=min(old, new))[1])


def fmt_usd_delta(delta: Delta) -> str:
    if delta.old is None or delta.new is None:
        return "–"
    change = round(delta.new, 4) - round(delta.old, 4)
    return _signed(round(change, 4), f"${abs(change):.4f}")


def fmt_pp_delta(delta: Delta) -> str:
    """A change of a pass rate, in percentage points."""
    return "–" if delta.change is None else f"{fmt_pp(delta.change)} pp"


def fmt_ids(ids: Any, limit: int = 60) -> str:
    """Question ids, each escaped like a table cell and cut at `limit`, comma-separated:
    the compact list that names every question when the rows about them must go."""
    return ", ".join(escape_md(i, limit) for i in ids)


def word_diff(
    old: str | None, new: str | None, limit: int = 400
) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """The two answers as runs of words, (text, changed): words only in the baseline answer
    are changed on the old side, words only in this run's on the new side. Each side is cut
    to about `limit` characters. The text is untrusted: the caller escapes every run."""
    import difflib

    a, b = (old or "").split(), (new or "").split()
    old_runs: list[tuple[str, bool]] = []
    new_runs: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if i2 > i1:
            old_runs.append((" ".join(a[i1:i2]), tag != "equal"))
        if j2 > j1:
            new_runs.append((" ".join(b[j1:j2]), tag != "equal"))
    return _cut(old_runs, limit), _cut(new_runs, limit)


def _cut(runs: list[tuple[str, bool]], limit: int) -> list[tuple[str, bool]]:
    out, used = [], 0
    for text, changed in runs:
        if used + len(text) > limit:
            out.append((text[: max(0, limit - used)] + " …", changed))
            break
        out.append((text, changed))
        used += len(text) + 1
    return out


def fmt_usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def fmt_pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def fmt_budget(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    return (
        fmt_ms(value)
        if unit == "s"
        else f"${value:.6f}".rstrip("0").rstrip(".")
        if value < 0.01
        else fmt_usd(value)
    )


def fmt_latency_delta(change: QuestionChange) -> str:
    return fmt_ms_delta(Delta(change.old_latency_s, change.new_latency_s))


def _template_globals() -> dict[str, Any]:
    """The helpers the templates call by name: the view's words, a row's cells, the alerts."""
    return dict(
        word_diff=word_diff,
        delta_rows=deltas.delta_rows,
        error_causes=error_causes,
        short_sha=view.short_sha,
        plural=view.plural,
        confirmation_calls=confirmation_calls,
        **{
            name: getattr(view, name)
            for name in (
                "gate_kinds",
                "where_line",
                "counts_line",
                "next_line",
                "significance_line",
                "stage_groups",
                "failing_sections",
                "anchor",
                "leak_rows",
                "regression_rows",
                "worse_rows",
                "gate_off_after_merge",
                "dirty_words",
                "target_log",
            )
        },
        **{
            name: getattr(rows, name)
            for name in (
                "metrics_cell",
                "metric_cell",
                "why_cell",
                "leak_words",
                "noise_words",
                "baseline_words",
                "row_notes",
                "answers_words",
            )
        },
        **{
            name: getattr(alerts, name)
            for name in (
                "fake_judge_after_merge",
                "broken_words",
                "changed_sources_line",
                "budget_limit",
                "stale_dead",
                "stale_insufficient",
                "flaky_failing",
                "citing_missing",
                "missing_sources_line",
                "headline_cause",
                "not_evaluated_next",
                "failing_why",
            )
        },
    )


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
    env.filters.update(
        u=escape_md,
        quote=escape_notice,
        url=markdown_url,
        num=fmt_num,
        delta=fmt_delta,
        ms=fmt_ms,
        usd=fmt_usd,
        pct=fmt_pct,
        budget=fmt_budget,
        pp=fmt_pp,
        pvalue=fmt_p,
        ms_delta=fmt_ms_delta,
        usd_delta=fmt_usd_delta,
        pp_delta=fmt_pp_delta,
        ids=fmt_ids,
        accept_yaml=rows.accept_yaml,
        log_block=view.log_block,
        latency_delta=fmt_latency_delta,
    )
    env.globals.update(_template_globals())
    return env


def verdict_headline(head: RunResult, comparison: Comparison | None) -> tuple[str, str]:
    """The verdict class and the headline: what kind of failure, leaks first."""
    if head.meta.broken:
        return "fail", "⛔ broken run: not a result"
    if comparison is None:
        return "bootstrap", "🟡 no baseline to compare with"
    kinds = view.gate_kinds(comparison)
    accepted = (
        f" · {len(comparison.accepted)} accepted" if comparison.accepted else ""
    )  # never "(1 accepted)": read as "of which"
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
) -> str:
    """The markdown report, shortened to fit max_chars (rows first, then detail sections,
    never the ids of the questions that fail the gate); a hard cut with a note is the last resort.

    `trend` is rag_ci.core.comparison.history.trend_summary(...); `report_url` (the run's artifact or
    page) or `report_path` (a local file) is where the full HTML report is; `commits` what was
    compared; `measured` the judge-free regressions a broken run found (listed, not gating);
    `summary_url` the job summary with every row (a comment names it where it cuts rows)."""
    verdict, headline = verdict_headline(head, comparison)
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
            accept_entry=rows.accept_entry,
        )
    )


def score_delta_chart(comparison: Comparison | None, head: RunResult, width: int = 640) -> str:
    from rag_ci.core.reporting.charts import score_delta_chart as chart

    return chart(comparison, head, width)
