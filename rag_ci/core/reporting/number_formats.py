"""The numbers as the report prints them: the numeric filters (a template's `x | num`, `x | ms`).

Each prints digits, signs and units only, so a number needs no escaping where it is printed
(tests/unit/test_render.py counts these filters as safe). A change is computed from the rounded
values printed beside it, so "0.70 → 0.75" reads "+0.05", never "+0.04".
"""

from __future__ import annotations

from rag_ci.core.comparison.compare import Delta, QuestionChange
from rag_ci.core.comparison.stats import format_p, format_pp
from rag_ci.core.reporting.deltas import ms_text
from rag_ci.core.reporting.template_functions import template_filter

# Defined with the statistics, which know nothing of templates: registered here, with the other numbers.
template_filter("pp")(format_pp)
template_filter("pvalue")(format_p)


@template_filter("num")
def fmt_num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float, text: str) -> str:
    # One minus sign everywhere, the true one; a change that rounds to nothing is ±0.
    return ("+" if value > 0 else "−" if value < 0 else "±") + text.lstrip("-")


@template_filter("delta")
def fmt_delta(delta: Delta, digits: int = 2, unit: str = "") -> str:
    if delta.old is None or delta.new is None:
        return "–"
    change = round(delta.new, digits) - round(delta.old, digits)  # from the values displayed beside it
    return _signed(round(change, digits), f"{abs(change):.{digits}f}{unit}")


@template_filter("ms")
def fmt_ms(seconds: float | None) -> str:
    return ms_text(seconds)[1]


def fmt_ms_delta(delta: Delta) -> str:
    """A latency change in ms, from the latencies displayed beside it."""
    (old, _), (new, _) = ms_text(delta.old), ms_text(delta.new)
    if old is None or new is None:
        return "–"
    change = new - old
    return _signed(change, ms_text(abs(change), delta_of=True, like=min(old, new))[1])


@template_filter("pp_delta")
def fmt_pp_delta(delta: Delta) -> str:
    """A change of a pass rate, in percentage points."""
    return "–" if delta.change is None else f"{format_pp(delta.change)} pp"


@template_filter("usd")
def fmt_usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


@template_filter("pct")
def fmt_pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


@template_filter("budget")
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


@template_filter("latency_delta")
def fmt_latency_delta(change: QuestionChange) -> str:
    return fmt_ms_delta(Delta(change.old_latency_s, change.new_latency_s))
