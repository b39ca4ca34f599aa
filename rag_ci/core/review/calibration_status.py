"""Was the judge that decided this run checked against humans? (the report's footer line)

A calibration counts for the exact judge fingerprint it was measured on (model, prompts,
thresholds, DeepEval version): another judge is another instrument. It lapses after
`judge.calibration_max_age_days` and does not vouch for the judge below `judge.min_kappa`.

Pure: records (rag_ci.core.comparison.history.parse_calibrations) and today's date in, statuses out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date as Date
from typing import Any, Literal

from rag_ci.core.results import RunResult

# The metrics a human labels (rag_ci.core.review.audit.LABEL_FIELDS).
CALIBRATED_METRICS = ("correctness", "completeness")


@dataclass(frozen=True)
class CalibrationStatus:
    metric: str
    state: Literal["calibrated", "none", "stale", "low_kappa"]
    text: str  # one sentence for the footer; quotes nothing untrusted but the metric name

    @property
    def ok(self) -> bool:
        return self.state == "calibrated"

    @property
    def line(self) -> str:
        return ("✅ " if self.ok else "⚠️ ") + self.text


def metrics_to_calibrate(run: RunResult) -> tuple[str, ...]:
    """The judge metrics of the run that humans label (in the recorded judge fingerprint)."""
    judge = run.meta.judge
    if judge is None:
        return ()
    return tuple(m for m in CALIBRATED_METRICS if m in judge.metrics)


def calibration_statuses(
    run: RunResult, records: Iterable[Mapping[str, Any]], today: Date, *, max_age_days: int, min_kappa: float
) -> list[CalibrationStatus]:
    """One status per labelled judge metric of the run; empty for a judge-free run."""
    judge = run.meta.judge
    if judge is None:
        return []
    digest = judge.digest()
    statuses = []
    for metric in metrics_to_calibrate(run):
        mine = [r for r in records if r.get("judge_digest") == digest and r.get("metric") == metric]
        if not mine:
            statuses.append(
                CalibrationStatus(
                    metric,
                    "none",
                    f"{metric} judge not calibrated: no human labels for this judge fingerprint "
                    f"({digest[:12]}); label an audit sample (rag-ci audit sample)",
                )
            )
            continue
        latest = max(mine, key=lambda r: str(r["date"]))
        day, kappa = str(latest["date"])[:10], latest.get("kappa")
        shown = "n/a" if kappa is None else f"{kappa:.2f}"
        summary = f"{metric} judge calibrated on {latest['n']} labels, kappa {shown} ({day})"
        try:
            age = (today - Date.fromisoformat(day)).days
        except ValueError:
            age = max_age_days + 1
        if age > max_age_days:
            statuses.append(
                CalibrationStatus(metric, "stale", f"{summary}: older than {max_age_days} days, re-audit")
            )
        elif kappa is None or kappa < min_kappa:
            statuses.append(
                CalibrationStatus(metric, "low_kappa", f"{summary}: below the minimum kappa {min_kappa:.2f}")
            )
        else:
            statuses.append(CalibrationStatus(metric, "calibrated", summary))
    return statuses


def uncalibrated_reason(statuses: list[CalibrationStatus]) -> str | None:
    """Why gate.require_calibration refuses the run, or None when every metric is calibrated."""
    bad = [s.text for s in statuses if not s.ok]
    return "; ".join(bad) if bad else None


def calibration_limits(run: RunResult) -> tuple[int, float]:
    """(max age in days, min kappa) as the run recorded its judge policy; the defaults otherwise."""
    from rag_ci.core.config import JudgeConfig

    defaults = JudgeConfig()
    recorded = run.meta.policy.judge if run.meta.policy else {}
    max_age, min_kappa = recorded.get("calibration_max_age_days"), recorded.get("min_kappa")
    return (
        max_age if isinstance(max_age, int) and max_age >= 1 else defaults.calibration_max_age_days,
        float(min_kappa) if isinstance(min_kappa, (int, float)) else defaults.min_kappa,
    )


def statuses_from_history(run: RunResult, history_text: str | None, today: Date) -> list[CalibrationStatus]:
    """The footer's statuses from an eval_history.jsonl's text (None: no history, all unknown)."""
    from rag_ci.core.comparison.history import parse_calibrations

    max_age, min_kappa = calibration_limits(run)
    return calibration_statuses(
        run, parse_calibrations(history_text or ""), today, max_age_days=max_age, min_kappa=min_kappa
    )
