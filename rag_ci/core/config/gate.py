"""`gate:` and `baseline:` — what fails the check, the budgets, and how the baseline is made."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from rag_ci.core.config.base import StrictModel

_RELATIVE = re.compile(r"^\+?(\d+(\.\d+)?)\s*%$")


def _budget_limit(value: float | str | None) -> float | str | None:
    """A budget is absolute (a number) or relative to the baseline ("+20%")."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        if value is not None and value < 0:
            raise ValueError("a budget must be >= 0")
        return value
    if isinstance(value, str) and _RELATIVE.match(value.strip()):
        return value.strip()
    raise ValueError(f'expected a number (absolute) or a relative limit like "+20%", got {value!r}')


class BudgetsConfig(StrictModel):
    """Gates on latency and cost (docs/gate.md); a breach is listed with its numbers and fails."""

    latency_p50: float | str | None = Field(
        None, description='Limit of the median latency: seconds, or relative to the baseline\'s ("+20%").'
    )
    latency_p95: float | str | None = Field(
        None,
        description='Limit of the 95th-percentile latency: seconds, or relative to the baseline\'s ("+20%").',
    )
    cost_per_question_usd: float | str | None = Field(
        None,
        description="Limit of the generator's cost per question: US dollars, or relative to the baseline's (\"+20%\").",
    )
    judge_cost_usd: float | str | None = Field(
        None,
        description='Limit of the judge\'s spend on the whole run, re-asks included: US dollars, or relative ("+20%").',
    )

    @field_validator("*", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> Any:
        return _budget_limit(value)


class GateConfig(StrictModel):
    fail_on: Literal["any_regression", "significant_drop", "never"] = Field(
        "any_regression",
        description="What fails the check: `any_regression` (a question that passed fails), `significant_drop` (only a statistically significant drop), `never` (report only).",
    )
    confirm_runs: int = Field(
        3,
        ge=0,
        le=15,
        description="Judge noise: a flipped verdict is re-judged on both sides, one vote at a time, until one side leads by the margin the judge's disagreement rate needs (a lead, not a majority); at most this many votes per side, or the cap that rate needs if larger (9 at 5 %). 0 or 1: no re-judging.",
    )
    # Generator noise (docs/noise.md): re-ask a flipped question up to this many times.
    confirm_target_runs: int = Field(
        3,
        ge=0,
        le=15,
        description="Generator noise: a question that flipped is asked again up to this many times; a pass clears it.",
    )
    alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="Significance level of every statistical test in the report and the gate.",
    )
    budgets: BudgetsConfig = Field(
        default_factory=BudgetsConfig, description="Limits on latency and cost; a breach fails the check."
    )
    # A run where more than this share of questions errored (judge-metric errors included)
    # is broken, not a result: exit 2, never a baseline (docs/gate.md).
    max_error_rate: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="A run where more than this share of questions errored is broken, not a result: exit 2, never a baseline.",
    )
    # A full run (dispatch/schedule, before a release) fails (exit 2) when its judge has no
    # valid human calibration in the history (docs/judges.md).
    require_calibration: bool = Field(
        False,
        description="A full run (schedule, dispatch) fails when its judge has no valid human calibration in the history.",
    )
    # Accepted regressions (docs/accepted.md), relative to the question set's folder. Read
    # from the pull request itself, never pinned to the baseline's policy.
    accepted: str = Field(
        "accepted.yml",
        description="The file of accepted regressions, relative to the question set's folder; read from the pull request itself.",
    )


class BaselineConfig(StrictModel):
    # Answers per question on a run that is not for a pull request (the baseline on main).
    samples: int = Field(
        1,
        ge=1,
        le=15,
        description="Answers per question on a baseline run (not for a pull request), the majority kept.",
    )
