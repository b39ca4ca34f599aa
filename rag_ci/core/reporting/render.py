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

import html
import re
from functools import lru_cache
from typing import Any

import jinja2

from rag_ci.core.comparison.compare import Comparison, Delta, QuestionChange
from rag_ci.core.scoring.results import RunResult
from rag_ci.core.comparison.stats import format_p as fmt_p, format_pp as fmt_pp

# Brackets are escaped, so parentheses and `!` can never complete a link or an image.
_MD_SPECIALS = "\\`*_{}[]#+|~<>"
STAGE_TITLES = {
    "retrieval": "Retrieval (the expected context was not retrieved, ranked lower, or is not the baseline's)",
    "generation": "Generation failure (right context, wrong answer)",
    "both": "Retrieval and generation",
    None: "Errors and routing leaks",
}


# What GitHub turns into a link by itself (GFM's extended autolinks).
_BARE_URL = re.compile(r"(?i)(?:(?:https?|ftp)://|www\.)\S+")


def code_span(text: str, *, in_table: bool = True) -> str:
    """`text` as inline code: shown as typed, never a link, a mention or markup. The fence is
    longer than any backtick run inside; in a table cell `|` would still end the cell."""
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
        out.append(_escape_chars(text[position:url.start()]))
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
        flat = flat[: limit - 1] + "…"
    return _escape_inline(flat)


def escape_notice(text: Any, limit: int = 2000) -> str:
    """A notice (several lines, built from config values, error messages and the baseline)
    for a `> ` block quote: each line escaped like `escape_md`, except that a `backticked`
    part stays inline code (inert by itself), so rag-ci's own notices keep their formatting."""
    if text is None:
        return ""
    lines = []
    for line in str(text)[:limit].splitlines():
        parts = " ".join(line.split()).split("`")
        if len(parts) % 2 == 0:  # an unpaired backtick: the last one is plain text
            parts[-2:] = [parts[-2] + "`" + parts[-1]]
        rendered = [code_span(p, in_table=False) if i % 2 and p else _escape_inline(p, in_table=False) for i, p in enumerate(parts)]
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
        else:
            out.append(char)
    return "".join(out)


def fmt_num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def fmt_delta(delta: Delta, digits: int = 2, unit: str = "") -> str:
    if delta.change is None:
        return "–"
    sign = "+" if delta.change > 0 else ""
    return f"{sign}{delta.change:.{digits}f}{unit}"


def fmt_ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


def fmt_ms_delta(delta: Delta) -> str:
    """A latency change in ms, like the latencies beside it."""
    return "–" if delta.change is None else f"{delta.change * 1000:+.0f} ms"


def fmt_usd_delta(delta: Delta) -> str:
    if delta.change is None:
        return "–"
    sign = "+" if delta.change > 0 else "−" if delta.change < 0 else ""
    return f"{sign}${abs(delta.change):.4f}"


def fmt_pp_delta(delta: Delta) -> str:
    """A change of a pass rate, in percentage points."""
    return "–" if delta.change is None else f"{fmt_pp(delta.change)} pp"


def fmt_ids(ids: Any, limit: int = 60) -> str:
    """Question ids, each escaped like a table cell and cut at `limit`, comma-separated:
    the compact list that names every question when the rows about them must go."""
    return ", ".join(escape_md(i, limit) for i in ids)


def word_diff(old: str | None, new: str | None, limit: int = 400) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
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
    return fmt_ms(value) if unit == "s" else f"${value:.6f}".rstrip("0").rstrip(".") if value < 0.01 else fmt_usd(value)


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
    env.filters.update(u=escape_md, quote=escape_notice, url=markdown_url, num=fmt_num, delta=fmt_delta, ms=fmt_ms,
                       usd=fmt_usd, pct=fmt_pct, budget=fmt_budget, pp=fmt_pp, pvalue=fmt_p, ms_delta=fmt_ms_delta,
                       usd_delta=fmt_usd_delta, pp_delta=fmt_pp_delta, ids=fmt_ids)
    env.globals.update(word_diff=word_diff)
    return env


def group_by_stage(changes: tuple[QuestionChange, ...]) -> list[tuple[str, list[QuestionChange]]]:
    """Regressions grouped by the stage that broke, in a fixed order."""
    groups: list[tuple[str, list[QuestionChange]]] = []
    for stage in ("retrieval", "generation", "both", None):
        members = [c for c in changes if (c.failure_stage if c.new_verdict == "fail" else None) == stage]
        if members:
            groups.append((STAGE_TITLES[stage], members))
    return groups


def _gate_counts(comparison: Comparison) -> str:
    """'2 regressions, 1 worse, 1 routing leak': what fails the gate, empty parts left out."""
    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'s' if n != 1 else ''}"

    parts = [plural(len(comparison.regressions), "regression")] if comparison.regressions or not comparison.gating else []
    if comparison.worse:
        parts.append(f"{len(comparison.worse)} worse")
    if comparison.leaks:
        parts.append(plural(len(comparison.leaks), "routing leak"))
    return ", ".join(parts)


def _headline(head: RunResult, comparison: Comparison | None) -> tuple[str, str]:
    if head.meta.broken:
        return "fail", "⛔ broken run: not a result"
    if comparison is None:
        return "bootstrap", "🟡 no baseline to compare with"
    if comparison.verdict == "fail":
        reasons = []
        if comparison.fail_on == "significant_drop":
            if comparison.leaking:  # a routing leak gates under every policy
                reasons.append(f"{len(comparison.leaking)} routing leak{'s' if len(comparison.leaking) != 1 else ''}")
            if comparison.significant_drop:
                reasons.append("significant pass-rate drop")
        elif comparison.gating:
            reasons.append(_gate_counts(comparison))
        if comparison.budget_breaches:
            k = len(comparison.budget_breaches)
            reasons.append(f"{k} budget{'s' if k != 1 else ''} exceeded")
        return "fail", "❌ " + ", ".join(reasons or [_gate_counts(comparison)])
    accepted = f" ({len(comparison.accepted)} accepted)" if comparison.accepted else ""
    if comparison.gating:
        return "pass", f"⚠️ {_gate_counts(comparison)} (gate disabled){accepted}"
    return "pass", f"✅ no regression{accepted}"


# Ever shorter renderings, tried in order until one fits: rows per table (None: all), then
# `compact` leaves out every detail section. The ids of every question that fails the gate
# (or is accepted) are printed in all of them: rows go, names never do.
_SHORTENINGS = ((None, False), (50, False), (20, False), (5, False), (0, False), (0, True))


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
) -> str:
    """The markdown report, shortened to fit max_chars (rows first, then detail sections,
    never the ids of the questions that fail the gate); a hard cut with a note is the last resort.

    `trend` is rag_ci.core.comparison.history.trend_summary(...); `report_url` (the run's artifact or
    page) or `report_path` (a local file) is where the full HTML report is."""
    verdict, headline = _headline(head, comparison)
    template = _environment(False).get_template("report.md.j2")
    text = ""
    for row_limit, compact in _SHORTENINGS:
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
            row_limit=row_limit,
            compact=compact,
            failing=[q for q in head.questions if not q.passed],
            regression_groups=group_by_stage(comparison.regressions) if comparison else [],
        )
        if len(text) <= max_chars:
            return text
    note = "\n\n_…report truncated to fit GitHub's comment limit; see the step summary or the HTML report._\n"
    return text[: max_chars - len(note)] + note


def score_delta_chart(comparison: Comparison | None, head: RunResult, width: int = 640) -> str:
    """Inline SVG: one row per question; bar = how it compares with the baseline, dot = latency.

    The bar is red for every question that fails the gate (regression, worse, routing
    leak: the headline's count) and green for a gain, its length the number of metrics that
    crossed their threshold (at least one); other questions get no bar. The latency dots
    share an axis in ms. Built from numbers and escaped ids only, so it is safe to embed.
    """
    gating = {c.id: c for c in comparison.gating} if comparison is not None else {}
    gains = {c.id: c for c in comparison.gains} if comparison is not None else {}
    questions = head.questions
    max_latency = max((q.latency_s or 0.0) for q in questions) if questions else 0.0
    max_latency = max_latency or 1.0
    label_w, row_h, axis_h = 150, 14, 28
    mid = label_w + 70
    lat_left, lat_right = mid + 90, width - 20
    rows = []
    for i, q in enumerate(questions):
        y = i * row_h
        label = html.escape(q.id[:24])
        row = f'<text x="0" y="{y + 11}" font-size="10">{label}</text>'
        if q.id in gating or q.id in gains:
            change = gating.get(q.id) or gains[q.id]
            down = q.id in gating
            crossed = sum(1 for m in change.metrics if (m.crossed_down if down else m.crossed_up))
            bar_w = max(1, crossed) * 12
            bar_x = mid - bar_w if down else mid
            kind = "fails the gate" if down else "gain"
            row += (f'<rect x="{bar_x}" y="{y + 3}" width="{bar_w}" height="9" fill="{"#cf222e" if down else "#2da44e"}" '
                    f'class="{"gating" if down else "gain"}"><title>{html.escape(q.id)}: {kind}, {crossed} metrics crossed</title></rect>')
        lat_x = lat_left + int((lat_right - lat_left) * (q.latency_s or 0.0) / max_latency)
        row += (f'<circle cx="{lat_x}" cy="{y + 7}" r="3" fill="#0969da"><title>{html.escape(q.id)}: '
                f'{fmt_ms(q.latency_s)}</title></circle>')
        rows.append(row)
    body_h = max(len(questions) * row_h, row_h)
    ticks = []
    for step in range(5):
        x = lat_left + (lat_right - lat_left) * step // 4
        ticks.append(f'<line x1="{x}" y1="{body_h}" x2="{x}" y2="{body_h + 4}" stroke="#57606a"/>'
                     f'<text x="{x}" y="{body_h + 15}" font-size="9" text-anchor="middle">{max_latency * 1000 * step / 4:.0f}</text>')
    axes = (f'<line x1="{mid}" y1="0" x2="{mid}" y2="{body_h}" stroke="#d0d7de"/>'
            f'<line x1="{lat_left}" y1="{body_h}" x2="{lat_right}" y2="{body_h}" stroke="#57606a"/>' + "".join(ticks)
            + f'<text x="{(lat_left + lat_right) // 2}" y="{body_h + 26}" font-size="9" text-anchor="middle">latency (ms)</text>'
            + f'<text x="{mid}" y="{body_h + 26}" font-size="9" text-anchor="middle">baseline</text>')
    height = body_h + axis_h
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="per-question changes against the baseline and latency">{axes}{"".join(rows)}</svg>'
    )


def render_html(head: RunResult, comparison: Comparison | None = None, *, calibration: list[Any] | None = None,
                history: list[dict[str, Any]] | None = None) -> str:
    """A standalone HTML page (no external assets) with the same content, the per-question
    chart and, given the history of main, its trend as charts (overall and per corpus)."""
    from markupsafe import Markup

    from rag_ci.core.reporting.charts import trend_charts

    verdict, headline = _headline(head, comparison)
    entries = (history or [])[-10:]
    return _environment(True).get_template("report.html.j2").render(
        head=head,
        cmp=comparison,
        verdict=verdict,
        headline=headline,
        chart=Markup(score_delta_chart(comparison, head)),
        calibration=calibration or [],
        trend_charts=Markup(trend_charts(entries)) if entries else None,
        trend_runs=len(entries),
        regression_groups=group_by_stage(comparison.regressions) if comparison else [],
    )
