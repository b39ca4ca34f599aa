"""A run compared with its baseline, and the outcome of it (rag_ci.gate.decision.compare_runs):
under the baseline's recorded gate, of the shard the run covers, with the accepted file applied."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rag_ci.core.comparison.compare import REBASELINE_HINT, compare
from rag_ci.core.comparison.policy import recorded_gate
from rag_ci.core.config import GateConfig
from rag_ci.core.results import RunResult
from rag_ci.core.review.accepted import Acceptance, apply_accepted, baseline_hashes, question_hashes
from rag_ci.core.review.calibration_status import CalibrationStatus
from rag_ci.core.review.history_view import History
from rag_ci.core.scoring.aggregate import restrict_to_shard
from rag_ci.errors import BrokenRun, IncompatibleBaseline
from rag_ci.gate.outcome import GateOptions, GateOutcome, Verdict
from rag_ci.gate.pinning import refuse_a_fake_judged_baseline


def compared(
    baseline: RunResult,
    head: RunResult,
    *,
    gate: GateConfig | None,
    accepted: Sequence[Acceptance],
    history: History,
    options: GateOptions,
    policy_changes: tuple[str, ...],
    notices: tuple[str, ...],
    calibration: tuple[CalibrationStatus, ...],
) -> GateOutcome:
    """The outcome of comparing a run that is a result with its baseline (the exit code is the caller's)."""
    refuse_a_fake_judged_baseline(baseline)
    gate = gate or recorded_gate(baseline.meta)
    if options.shard is not None:
        baseline = restrict_to_shard(baseline, options.shard)
    try:
        comparison = compare(
            baseline,
            head,
            fail_on=options.fail_on or gate.fail_on,
            gate=gate,
            known_flaky=history.known_flaky(),
        )
    except (IncompatibleBaseline, BrokenRun) as exc:
        verdict = Verdict.INCOMPATIBLE if isinstance(exc, IncompatibleBaseline) else Verdict.BROKEN
        words = str(exc).replace(REBASELINE_HINT, options.rebaseline_hint)
        return GateOutcome(
            verdict, head, 0, notices=(*notices, f"Not compared: {words}"), calibration=calibration
        )
    if history.ignored_marks:
        notices = (
            *notices,
            f"{history.ignored_marks} line(s) of the history mark questions as known-flaky but were not "
            "written by rag-ci on the default branch (no verified commit of the action added them): their marks "
            "were ignored, and no regression was cleared by them.",
        )
    comparison = dataclasses.replace(comparison, policy_changes=policy_changes)
    comparison = apply_accepted(
        comparison,
        tuple(accepted),
        question_hashes(head),
        baseline_hashes=baseline_hashes(baseline, comparison),
    )
    verdict = Verdict(comparison.verdict)
    if options.all_metrics_comparable and comparison.not_comparable:
        names = ", ".join(n.name for n in comparison.not_comparable)
        verdict = Verdict.INCOMPATIBLE
        notices = (
            *notices,
            f"Not fully compared: the definition of {names} changed since the baseline.\n{options.rebaseline_hint}",
        )
    return GateOutcome(verdict, head, 0, comparison, notices, policy_changes, calibration=calibration)
