"""Latency and cost, baseline → this run, as the report shows them: each row's displayed
values, its change from the displayed values, and its flag (a change beyond ±20 %, a budget
breached, or within noise). A latency row is flagged only for a rise, and only one beyond the
noise measured on this run's runner (rag_ci.core.comparison.latency_noise): a speed-up is
never a warning, and latency is never a word of a passing headline, since it measures the
machine's load as much as the PR. Pure: numbers in, text out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rag_ci.core.comparison.compare import Comparison, Delta
from rag_ci.core.comparison.latency_noise import runner_spread
from rag_ci.core.reporting.template_functions import template_global
from rag_ci.core.results import RunResult

BIG_CHANGE = 0.20  # a relative change beyond ±20 % is flagged
LATENCY_NOISE_S = 0.010  # ... unless it is under 10 ms: timer noise on a fast target


@dataclass(frozen=True)
class DeltaRow:
    label: str
    old: str
    new: str
    change: str  # from the displayed values: '+1.2 ms (+35 %)', '±0 ms'
    flag: str  # '⚠️' beyond ±20 %, '❌ over budget', '✅ within noise (budget)'
    relative: str = ""  # '+35 %': what the headline says of a flagged rise


@template_global
def delta_rows(cmp: Comparison, head: RunResult) -> list[DeltaRow]:
    """Latency and cost, baseline → this run; rows without data left out (no judge row
    on a judge-free run, no cost rows when the target reports no cost)."""
    breached = {b.name for b in cmp.budget_breaches}
    # the Budgets table says "within noise": so does this one
    noisy = {b.name for b in cmp.budgets if b.within_noise}
    spread = runner_spread(head)
    rows = []
    for label, delta, budget in (
        ("latency p50", cmp.latency_p50_s, "latency_p50"),
        ("latency p95", cmp.latency_p95_s, "latency_p95"),
    ):
        if delta.old is not None or delta.new is not None:
            row = _row(
                label, delta, ms_text, budget in breached, noise=LATENCY_NOISE_S, within_noise=budget in noisy
            )
            rows.append(_quiet_if_noise(row, delta, cmp.latency_rise_bounds.get(budget), spread))
    if _shown_cost(cmp.generator_cost_usd):
        rows.append(
            _row("generator cost", cmp.generator_cost_usd, usd_text, "cost_per_question_usd" in breached)
        )
    if _shown_cost(cmp.judge_cost_usd):  # $0.0000 → $0.0000 says nothing
        rows.extend(_judge_rows(cmp, "judge_cost_usd" in breached))
    return rows


def _judge_rows(cmp: Comparison, breached: bool) -> list[DeltaRow]:
    """The judge's cost; when this run reused cached verdicts, like with like: the verdicts it
    judged, on both runs, then the reused ones (what the baseline paid for them: calls not made)."""
    split = cmp.judge_cost_split
    if split is None:
        return [_row("judge cost", cmp.judge_cost_usd, usd_text, breached)]
    judged = _row(
        f"judge cost of the {split.judged} verdicts judged",
        Delta(split.judged_old_usd, split.judged_new_usd),
        usd_text,
        breached,
    )
    reused = DeltaRow(
        f"{split.reused} verdicts reused from the cache",
        usd_text(split.reused_old_usd)[1],
        "$0 (no calls)",
        "–",
        "",
    )
    return [judged, reused]


def _quiet_if_noise(row: DeltaRow, delta: Delta, bound: float | None, spread: float | None) -> DeltaRow:
    """A latency row's ⚠️ stands for a rise this run is above with confidence beyond the flagged
    share of the baseline, or beyond the runner's own spread when that is larger (the floor
    scales with the baseline, where a fixed 10 ms called 13 → 25 ms on a loaded runner "p95
    +92 %"). A speed-up is never flagged: a budget says when a latency matters, and no budget
    breaches by getting faster."""
    if row.flag != "⚠️" or delta.old is None or delta.new is None:
        return row
    if delta.new < delta.old:
        return replace(row, flag="")
    floor = delta.old * (1 + max(BIG_CHANGE, spread or 0.0))
    if (bound if bound is not None else delta.new) > floor:
        return row
    return replace(row, flag="")


def _shown_cost(delta: Delta) -> bool:
    return bool(round(delta.old or 0.0, 4) or round(delta.new or 0.0, 4))


HEADLINE_LABELS = {
    "generator cost": "cost",
    "judge cost": "judge cost",
}


def delta_warnings(cmp: Comparison, head: RunResult) -> list[str]:
    """['cost +100 %']: the flagged rises of cost, for the headline (a breached budget is said
    there already). Never latency: on one machine a passing PR read "p50 +146 %" from the load
    alone; its ⚠️ row in the table and a budget (which gates) say what latency a PR may add."""
    rises = [
        row
        for row in delta_rows(cmp, head)
        if row.flag == "⚠️" and row.relative.startswith("+") and not row.label.startswith("latency")
    ]
    return [
        f"{HEADLINE_LABELS.get(row.label, row.label.split(' of the ')[0])} {row.relative}" for row in rises
    ]


def _row(
    label: str, delta: Delta, show: Any, breached: bool, noise: float = 0.0, within_noise: bool = False
) -> DeltaRow:
    (old_value, old_text), (new_value, new_text) = show(delta.old), show(delta.new)
    if old_value is None or new_value is None:
        return DeltaRow(label, old_text, new_text, "–", "❌ over budget" if breached else "")
    change = new_value - old_value
    unit_text = show(abs(change), delta_of=True, like=min(old_value, new_value))[1]
    sign = "+" if change > 0 else "−" if change < 0 else "±"
    relative = change / old_value if old_value else None
    rel_text = (
        f" ({sign if change else ''}{abs(relative) * 100:.0f} %)" if relative is not None and change else ""
    )
    big = relative is not None and abs(relative) > BIG_CHANGE and abs(change) >= noise * _scale(show)
    flag = (
        "❌ over budget"
        if breached
        else "✅ within noise (see Budgets)"
        if within_noise
        else "⚠️"
        if big
        else ""
    )
    relative_text = f"{sign}{abs(relative) * 100:.0f} %" if relative is not None and change else ""
    return DeltaRow(label, old_text, new_text, f"{sign}{unit_text}{rel_text}", flag, relative_text)


def _scale(show: Any) -> float:
    return 1000.0 if show is ms_text else 1.0  # ms_text works in displayed milliseconds


def ms_text(
    seconds: float | None, delta_of: bool = False, like: float | None = None
) -> tuple[float | None, str]:
    """(the value as displayed, in ms; its text): 1 decimal under 10 ms, whole ms under 10 s, then s.
    A change (`delta_of`: already in ms) is shown with the precision of the values `like` it."""
    if seconds is None:
        return None, "–"
    ms = seconds if delta_of else seconds * 1000
    scale = ms if like is None else like
    if scale >= 10_000 and like is not None:
        return ms, f"{ms / 1000:.1f} s"
    if scale >= 10 and like is not None:
        return ms, f"{ms:.0f} ms"
    if ms < 10:
        value = round(ms, 1)
        return value, f"{value:.1f} ms"
    if ms < 10_000:
        value = float(round(ms))
        return value, f"{value:.0f} ms"
    value = round(ms / 1000, 1) * 1000
    return value, f"{value / 1000:.1f} s"


def usd_text(
    value: float | None, delta_of: bool = False, like: float | None = None
) -> tuple[float | None, str]:
    if value is None:
        return None, "–"
    shown = round(value, 4)
    return shown, f"${shown:.4f}"
