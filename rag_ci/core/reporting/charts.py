"""The trend of main as inline SVG line charts, for the HTML report (no scripts, no network).

Built from numbers and `html.escape`d labels only (metric and corpus names, shas come from
the history file), so the markup is safe to embed.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

_W, _H, _LEFT, _RIGHT, _TOP, _BOTTOM = 300, 130, 46, 10, 20, 24


def _line_chart(
    title: str,
    points: list[tuple[str, float | None]],
    fmt: Callable[[float], str],
    *,
    lo: float | None = None,
    hi: float | None = None,
) -> str:
    values = [v for _, v in points if v is not None]
    if not values:
        return ""
    lo = min(values) if lo is None else lo
    hi = max(values) if hi is None else hi
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5 if lo else 0.0, hi + 0.5 if hi else 1.0
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    step = plot_w / max(1, len(points) - 1)

    def y_of(v: float) -> float:
        return _TOP + plot_h * (1 - (v - lo) / (hi - lo))

    coords = [(_LEFT + i * step, y_of(v), label, v) for i, (label, v) in enumerate(points) if v is not None]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in coords)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#0969da"><title>{html.escape(label)}: {html.escape(fmt(v))}</title></circle>'
        for x, y, label, v in coords
    )
    first, last = html.escape(points[0][0]), html.escape(points[-1][0])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" class="trend" '
        f'aria-label="{html.escape(title)}">'
        f'<text x="0" y="12" font-size="11" font-weight="600">{html.escape(title)}</text>'
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_h}" stroke="#57606a"/>'
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_W - _RIGHT}" y2="{_TOP + plot_h}" stroke="#57606a"/>'
        f'<text x="{_LEFT - 4}" y="{_TOP + 4}" font-size="9" text-anchor="end">{html.escape(fmt(hi))}</text>'
        f'<text x="{_LEFT - 4}" y="{_TOP + plot_h}" font-size="9" text-anchor="end">{html.escape(fmt(lo))}</text>'
        f'<text x="{_LEFT}" y="{_H - 6}" font-size="9">{first}</text>'
        f'<text x="{_W - _RIGHT}" y="{_H - 6}" font-size="9" text-anchor="end">{last}</text>'
        f'<polyline points="{path}" fill="none" stroke="#0969da" stroke-width="1.5"/>{dots}</svg>'
    )


def _label(entry: dict[str, Any]) -> str:
    return f"{str(entry.get('timestamp') or '')[:10]} {str(entry.get('git_sha') or '')[:7]}".strip() or "?"


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _member(key: str, name: str) -> Callable[[dict[str, Any]], Any]:
    """A history entry's `name` under its mapping `key` (metrics, corpora), None when absent."""
    return lambda entry: (entry.get(key) or {}).get(name)


def trend_charts(entries: list[dict[str, Any]]) -> str:
    """One chart per series: pass rate, each metric's mean, p95 latency, cost, and the pass
    rate of each corpus (history lines written since it was recorded)."""
    labels = [_label(e) for e in entries]

    def series(get: Callable[[dict[str, Any]], Any]) -> list[tuple[str, float | None]]:
        return [(label, _num(get(e))) for label, e in zip(labels, entries)]

    pct = lambda v: f"{v * 100:.0f}%"
    charts = [_line_chart("pass rate", series(lambda e: e.get("pass_rate")), pct, lo=0.0, hi=1.0)]
    metrics = sorted({name for e in entries if isinstance(e.get("metrics"), dict) for name in e["metrics"]})
    for name in metrics:
        charts.append(
            _line_chart(
                f"mean {name}", series(_member("metrics", name)), lambda v: f"{v:.2f}", lo=0.0, hi=1.0
            )
        )
    charts.append(
        _line_chart(
            "latency p95 (ms)", series(lambda e: _ms(e.get("latency_p95_s"))), lambda v: f"{v:.0f} ms", lo=0.0
        )
    )
    charts.append(
        _line_chart(
            "cost per run ($)",
            series(
                lambda e: (_num(e.get("generator_cost_usd")) or 0.0) + (_num(e.get("judge_cost_usd")) or 0.0)
            ),
            lambda v: f"${v:.4f}",
            lo=0.0,
        )
    )
    corpora = sorted({name for e in entries if isinstance(e.get("corpora"), dict) for name in e["corpora"]})
    for name in corpora:
        charts.append(
            _line_chart(f"pass rate, corpus {name}", series(_member("corpora", name)), pct, lo=0.0, hi=1.0)
        )
    return '<div class="trends">' + "".join(c for c in charts if c) + "</div>"


def _ms(seconds: Any) -> float | None:
    value = _num(seconds)
    return None if value is None else value * 1000


def score_delta_chart(comparison: Any, head: Any, width: int = 640) -> str:
    """Inline SVG: one row per question; bar = how it compares with the baseline, dot = latency.

    The bar is red for every question that fails the gate (regression, worse, routing
    leak: the headline's count) and green for a gain, its length the number of metrics that
    crossed their threshold (at least one); other questions get no bar. The latency dots
    share an axis in ms, every tick labelled with its unit. Built from numbers and escaped
    ids only, so it is safe to embed.
    """
    gating = {c.id: c for c in comparison.gating} if comparison is not None else {}
    gains = {c.id: c for c in comparison.gains} if comparison is not None else {}
    questions = head.questions
    max_latency = max((q.latency_s or 0.0) for q in questions) if questions else 0.0
    max_latency = max_latency or 1.0
    label_w, row_h, axis_h = 150, 14, 28
    mid = label_w + 70
    lat_left, lat_right = mid + 90, width - 30
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
            kind = (
                ("routing leak" if change.new_verdict == "routing_error" else "fails the gate")
                if down
                else "gain"
            )
            row += (
                f'<rect x="{bar_x}" y="{y + 3}" width="{bar_w}" height="9" fill="{"#cf222e" if down else "#2da44e"}" '
                f'class="{"gating" if down else "gain"}"><title>{html.escape(q.id)}: {kind}, {crossed} metrics crossed</title></rect>'
            )
        lat_x = lat_left + int((lat_right - lat_left) * (q.latency_s or 0.0) / max_latency)
        ms = (q.latency_s or 0.0) * 1000
        row += (
            f'<circle cx="{lat_x}" cy="{y + 7}" r="3" fill="#0969da"><title>{html.escape(q.id)}: '
            f"{ms:.0f} ms</title></circle>"
        )
        rows.append(row)
    body_h = max(len(questions) * row_h, row_h)
    ticks = []
    for step in range(5):
        x = lat_left + (lat_right - lat_left) * step // 4
        value = max_latency * 1000 * step / 4
        text = f"{value:.1f} ms" if max_latency < 0.01 else f"{value:.0f} ms"
        ticks.append(
            f'<line x1="{x}" y1="{body_h}" x2="{x}" y2="{body_h + 4}" stroke="#57606a"/>'
            f'<text x="{x}" y="{body_h + 15}" font-size="9" text-anchor="middle" class="tick">{text}</text>'
        )
    axes = (
        f'<line x1="{mid}" y1="0" x2="{mid}" y2="{body_h}" stroke="#d0d7de"/>'
        f'<line x1="{lat_left}" y1="{body_h}" x2="{lat_right}" y2="{body_h}" stroke="#57606a"/>'
        + "".join(ticks)
        + f'<text x="{(lat_left + lat_right) // 2}" y="{body_h + 26}" font-size="9" text-anchor="middle">latency</text>'
        + f'<text x="{mid}" y="{body_h + 15}" font-size="9" text-anchor="middle">◀ worse · better ▶</text>'
    )
    height = body_h + axis_h
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="per-question changes against the baseline and latency">{axes}{"".join(rows)}</svg>'
    )
