"""The gate: a run evaluated against its baseline, written once for both faces (docs/action.md, docs/cli.md).

A face calls it in order, and runs the engine itself in between:

    prepare   refuse the fake judge, check the baseline, pin the baseline's policy
              (rag_ci.gate.pinning)
    (run)     the face replays the pinned project
    decide    carry forward the last good verdicts → compare (known-flaky questions from the
              history) → record the policy changes → apply the accepted file → verdict,
              notices, calibration, exit code

`compare_runs` is decide's second half, for two results already on disk (`rag-ci compare`,
`rag-ci report`). The command line and the action call these and nothing of the core's
comparison: every rule is applied the same way on both. What still differs between them is
a field of `GateOptions` (rag_ci.gate.outcome), named there, and the words around the outcome.
The gate takes values, never callables: what it needs from GitHub or the disk (the history,
the base branch's config) the face reads before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from datetime import date as Date

from rag_ci.core.comparison.carry import carry_forward
from rag_ci.core.comparison.compare import judge_free_regressions
from rag_ci.core.comparison.identity import with_current_ids
from rag_ci.core.comparison.policy import recorded_gate
from rag_ci.core.config import GateConfig
from rag_ci.core.results import RunResult
from rag_ci.core.review.accepted import Acceptance, in_force, question_hashes
from rag_ci.core.review.calibration_status import uncalibrated_reason
from rag_ci.core.review.history_view import History
from rag_ci.gate.compared import compared
from rag_ci.gate.outcome import GateOptions, GateOutcome, Verdict, some, with_exit_code
from rag_ci.gate.pinning import PinnedProject


def decide(
    pinned: PinnedProject,
    baseline: RunResult | None,
    head: RunResult,
    *,
    accepted: Sequence[Acceptance] = (),
    history: History = History(),
    options: GateOptions = GateOptions(),
    today: Date | None = None,
) -> GateOutcome:
    """After the run: carry forward the last good verdicts, compare, apply the accepted file and
    the calibration rule, and give the exit code. When `carried` is not empty, `head` gained the
    carried verdicts: the face writes it again."""
    carried: tuple[str, ...] = ()
    if options.carry_forward and baseline is not None and not head.meta.broken:
        # a renamed question keeps its verdict too
        with_carried = carry_forward(with_current_ids(baseline, head)[0], head)
        if with_carried is not head:
            head = with_carried
            carried = tuple(q.id for q in head.questions if q.carried is not None)
    gate = pinned.project.config.gate
    if not options.compare and not head.meta.broken:
        outcome = GateOutcome(options.uncompared.verdict, head, 0, notices=some(options.uncompared.notice))
    else:
        outcome = compare_runs(
            baseline,
            head,
            gate=gate,
            accepted=accepted,
            history=history,
            options=options,
            policy_changes=pinned.policy_changes,
            notices=some(pinned.notice),
            today=today,
        )
    outcome = dataclasses.replace(outcome, carried=carried)
    if options.check_calibration and outcome.verdict != Verdict.BROKEN and gate.require_calibration:
        outcome = _require_calibration(outcome, history, today)
    return with_exit_code(outcome, options)


def compare_runs(
    baseline: RunResult | None,
    head: RunResult,
    *,
    gate: GateConfig | None = None,
    accepted: Sequence[Acceptance] = (),
    history: History = History(),
    options: GateOptions = GateOptions(),
    policy_changes: tuple[str, ...] = (),
    notices: tuple[str, ...] = (),
    today: Date | None = None,
) -> GateOutcome:
    """Compare `head` with `baseline` under `gate` (default: the baseline's recorded one) and decide."""
    calibration = history.calibration(head, today or datetime.now(UTC).date())
    if head.meta.broken:
        max_error_rate = (gate or recorded_gate(head.meta)).max_error_rate
        outcome = GateOutcome(
            Verdict.BROKEN,
            head,
            0,
            notices=(*notices, broken_notice(max_error_rate, options)),
            calibration=calibration,
            measured=judge_free_regressions(baseline, head) if baseline is not None else (),
        )
    elif baseline is None:
        leaks = _leaks_without_baseline(head, options.fail_on or (gate.fail_on if gate else None))
        outcome = GateOutcome(
            Verdict.FAIL if leaks else options.bootstrap.verdict,
            head,
            0,
            notices=(*notices, *some(options.bootstrap.notice), *some(leaks)),
            calibration=calibration,
        )
    else:
        outcome = compared(
            baseline,
            head,
            gate=gate,
            accepted=accepted,
            history=history,
            options=options,
            policy_changes=policy_changes,
            notices=notices,
            calibration=calibration,
        )
    return with_exit_code(outcome, options)


def accepted_in_force(entries: Sequence[Acceptance], head: RunResult) -> list[dict]:
    """The accepted entries that still apply to the run's question set, for its history line."""
    return in_force(tuple(entries), question_hashes(head))


def broken_notice(max_error_rate: float, options: GateOptions) -> str:
    return (
        "It is not compared"
        + (
            ", not uploaded as the baseline and not recorded in the history."
            if options.may_become_baseline
            else "."
        )
        + f" Fix what made more than {max_error_rate:.0%} of the questions error (judge key, "
        "judge or target availability) and re-run; the failing questions are listed below."
    )


def _require_calibration(outcome: GateOutcome, history: History, today: Date | None) -> GateOutcome:
    statuses = outcome.calibration or history.calibration(outcome.head, today or datetime.now(UTC).date())
    reason = uncalibrated_reason(list(statuses))
    if not reason:
        return outcome
    return dataclasses.replace(
        outcome,
        verdict=Verdict.UNCALIBRATED,
        notices=(
            f"gate.require_calibration: this full run's judge is not calibrated against human labels: {reason}. "
            'Label the audit sample (docs/judges.md, "Calibrating your judge") and record it with '
            "`rag-ci calibrate --record`.",
        ),
        calibration=statuses,
    )


def _leaks_without_baseline(head: RunResult, fail_on: str | None) -> str | None:
    """A routing leak always gates (docs/gate.md), with no baseline to compare with too;
    only a gate switched off on purpose (`fail_on: never`) lets it pass."""
    leaking = [q.id for q in head.questions if q.verdict == "routing_error"]
    if not leaking or fail_on == "never":
        return None
    shown = ", ".join(leaking[:20]) + (f" and {len(leaking) - 20} more" if len(leaking) > 20 else "")
    return (
        f"{len(leaking)} routing leak{'s' if len(leaking) != 1 else ''} ({shown}): contexts from corpora the question "
        "was not routed to. A leak always gates, with or without a baseline."
    )
