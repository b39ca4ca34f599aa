"""What the gate answers (rag_ci.gate): the verdict, the exit code it maps to, and the options
where the two faces differ."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rag_ci.core.comparison.compare import REBASELINE_HINT, Comparison, QuestionChange
from rag_ci.core.questionset.shards import Shard
from rag_ci.core.results import RunResult
from rag_ci.core.review.calibration_status import CalibrationStatus

EXIT_PASS, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2


class Verdict(enum.StrEnum):
    """The gate's verdict on a run. A str: `outcome.verdict == "fail"` holds, and it is written as its value."""

    PASS = "pass"
    FAIL = "fail"
    BOOTSTRAP = "bootstrap"  # no baseline yet
    INCOMPATIBLE = "incompatible"  # the baseline cannot be compared with
    BROKEN = "broken"  # the run is not a result
    UNCALIBRATED = "uncalibrated"  # gate.require_calibration, and the judge is not calibrated
    UNCOMPARED = "uncompared"  # not compared on purpose (GateOptions.compare)
    BASELINE = "baseline"  # the action's baseline mode: the run replaces the baseline
    REBASELINE = "rebaseline"  # the action's rebaseline mode


# Verdict -> exit code; any other verdict passes. 1 is a regression and only that.
GATE_EXIT_CODES: Mapping[str, int] = MappingProxyType(
    {
        Verdict.FAIL: EXIT_REGRESSION,
        # Not 1: nothing regressed, the run could not measure. On main, the failed step also
        # keeps the workflow from uploading it as the baseline.
        Verdict.BROKEN: EXIT_ERROR,
        # A PR cannot fix a baseline of another schema, and a scheduled re-evaluation that cannot
        # compare must not quietly pass: stop, and let a human re-baseline on purpose.
        Verdict.INCOMPATIBLE: EXIT_ERROR,
        # gate.require_calibration: the instrument is unchecked, not the RAG worse.
        Verdict.UNCALIBRATED: EXIT_ERROR,
    }
)


@dataclass(frozen=True)
class Uncompared:
    """What the outcome says when there is nothing to compare with."""

    verdict: Verdict
    notice: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))


BOOTSTRAP = Uncompared(
    Verdict.BOOTSTRAP,
    "bootstrap: no baseline yet. This run passes; the next run on the default branch creates the baseline.",
)


@dataclass(frozen=True)
class GateOptions:
    """Where the two faces differ, each difference named.

    The defaults are a pull request's gate: the baseline's policy, its verdicts carried
    forward, compared and decided with any regression failing."""

    pin_policy: bool = True  # gated by the baseline's recorded policy (`--policy config`: the config's own)
    carry_forward: bool = True  # an errored question keeps the baseline's last known good verdict
    compare: bool = True  # False: runs that replace the baseline (the action's baseline/rebaseline modes)
    uncompared: Uncompared = Uncompared(Verdict.UNCOMPARED)  # the outcome when `compare` is False
    bootstrap: Uncompared = BOOTSTRAP  # the outcome when there is no baseline
    fail_on: str | None = (
        None  # overrides the policy's gate.fail_on (`compare --fail-on`, `fail-on-regression: false`)
    )
    all_metrics_comparable: bool = (
        False  # a metric defined differently makes the outcome `incompatible` (full runs)
    )
    check_calibration: bool = False  # gate.require_calibration applies (full runs, before a release)
    may_become_baseline: bool = False  # refuse the fake judge: its verdicts must never gate anyone
    shard: Shard | None = (
        None  # the run covers one shard: compare the baseline's questions of that shard only
    )
    rebaseline_hint: str = REBASELINE_HINT  # how to get a comparable baseline again, in the face's words
    exit_codes: Mapping[str, int] = field(default_factory=lambda: GATE_EXIT_CODES)


@dataclass(frozen=True)
class GateOutcome:
    verdict: Verdict
    head: RunResult  # as evaluated: with the carried verdicts (the face writes it again when `carried`)
    exit_code: int
    comparison: Comparison | None = None
    notices: tuple[str, ...] = ()
    policy_changes: tuple[str, ...] = ()
    carried: tuple[str, ...] = ()  # ids of the errored questions that kept their last good verdict
    calibration: tuple[CalibrationStatus, ...] = ()
    # A broken run: the judge-free regressions it measured all the same, listed, never gated.
    measured: tuple[QuestionChange, ...] = ()

    @property
    def notice(self) -> str | None:
        return "\n\n".join(self.notices) or None

    @property
    def gate_off(self) -> bool:
        """Something gates, but the policy (fail_on never) or the options turned the gate off."""
        c = self.comparison
        return c is not None and bool(c.gating) and c.verdict != "fail"


def with_exit_code(outcome: GateOutcome, options: GateOptions) -> GateOutcome:
    return dataclasses.replace(outcome, exit_code=options.exit_codes.get(outcome.verdict, EXIT_PASS))


def some(text: str | None) -> tuple[str, ...]:
    return (text,) if text else ()
