"""The gate: a run evaluated against its baseline, written once for both faces (docs/action.md, docs/cli.md).

A face calls it in order, and runs the engine itself in between:

    prepare   refuse the fake judge, check the baseline, pin the baseline's policy
    (run)     the face replays the pinned project
    decide    carry forward the last good verdicts → compare (known-flaky questions from the
              history) → record the policy changes → apply the accepted file → verdict,
              notices, calibration, exit code

`compare_runs` is decide's second half, for two results already on disk (`rag-ci compare`,
`rag-ci report`). The command line and the action call these and nothing of the core's
comparison: every rule is applied the same way on both. What still differs between them is
a field of `GateOptions`, named there, and the words around the outcome. The gate takes
values, never callables: what it needs from GitHub or the disk (the history, the base
branch's config) the face reads before.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from datetime import date as Date
from types import MappingProxyType

from rag_ci.core.comparison.carry import carry_forward
from rag_ci.core.comparison.compare import (
    REBASELINE_HINT,
    Comparison,
    QuestionChange,
    check_baseline_usable,
    compare,
    judge_free_regressions,
)
from rag_ci.core.comparison.identity import with_current_ids
from rag_ci.core.comparison.policy import KEYLESS_JUDGES, pin_judge_to_base, pin_to_baseline, recorded_gate
from rag_ci.core.config import GateConfig
from rag_ci.core.questionset.shards import Shard
from rag_ci.core.results import RunResult
from rag_ci.core.review.accepted import Acceptance, apply_accepted, in_force
from rag_ci.core.review.calibration_status import CalibrationStatus, uncalibrated_reason
from rag_ci.core.review.history_view import History
from rag_ci.core.scoring.aggregate import restrict_to_shard
from rag_ci.errors import BrokenRun, IncompatibleBaseline, RagCiError
from rag_ci.files.project import Project

__all__ = [
    "EXIT_ERROR",
    "EXIT_PASS",
    "EXIT_REGRESSION",
    "GATE_EXIT_CODES",
    "REBASELINE_HINT",
    "Acceptance",
    "BaseConfig",
    "Comparison",
    "GateOptions",
    "GateOutcome",
    "History",
    "PinnedProject",
    "QuestionChange",
    "Uncompared",
    "Verdict",
    "accepted_in_force",
    "compare_runs",
    "decide",
    "needs_base_config",
    "pin",
    "prepare",
]

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

FAKE_JUDGE = "fake"


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
class BaseConfig:
    """The base branch's rag-ci.yml, as a face read it (the action: through the contents API)."""

    where: str  # "rag-ci.yml at main (1a2b3c4d5e6f)", for the notice
    text: str | None = None  # None: the base branch has no such file
    problem: str | None = None  # it could not be read


@dataclass(frozen=True)
class PinnedProject:
    """The project as it will run: under its baseline's policy when the options pin it."""

    project: Project
    policy_changes: tuple[str, ...] = ()  # what the project's own config would change ("hit_at_k.k 5 → 3")
    notice: str | None = None  # the baseline recorded only its thresholds
    # Questions the accepted file names: an accepted drop settles nothing, so each of their
    # judged pass → fail flips is confirmed on its own (rag_ci.judges.scorer).
    confirm_each: frozenset[str] = frozenset()


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


def needs_base_config(
    project: Project, baseline: RunResult | None, options: GateOptions = GateOptions()
) -> bool:
    """Must the judge come from the base branch's rag-ci.yml (`pin`)? Only when the policy is pinned,
    the baseline recorded no policy (or there is none) and the judge has a key at stake (not `none`
    nor `fake`): the face reads the base branch's config then, and only then."""
    if not options.pin_policy:
        return False
    pinned, settled = _pinned_to_baseline(project, baseline)
    return not settled and pinned.project.config.judge.provider not in KEYLESS_JUDGES


def pin(
    project: Project,
    baseline: RunResult | None,
    options: GateOptions = GateOptions(),
    base_config: BaseConfig | None = None,
) -> PinnedProject:
    """The project under the baseline's gate policy, never the config the pull request may have edited.

    Without a baseline that recorded its judge, the judge (where its key goes) comes from
    `base_config`, the base branch's rag-ci.yml, read by the face when `needs_base_config`
    says so; the judge does not run when that could not be read. Without `base_config`
    (the command line) the config's own judge runs."""
    if not options.pin_policy:
        return PinnedProject(project)
    pinned, settled = _pinned_to_baseline(project, baseline)
    if (
        settled or base_config is None or pinned.project.config.judge.provider in KEYLESS_JUDGES
    ):  # else no key is at stake
        return pinned
    judged = pin_judge_to_base(
        pinned.project.config, base_config.text, base_config.where, base_config.problem
    )
    notices = [*_some(pinned.notice), *_some(judged.notice)]
    if judged.changes:
        notices.append(
            f"The judge is the base branch's ({base_config.where}), not this pull request's; its changes take "
            f"effect once merged: {'; '.join(judged.changes)}"
        )
    return PinnedProject(
        dataclasses.replace(pinned.project, config=judged.config),
        (*pinned.policy_changes, *judged.changes),
        "\n\n".join(notices) or None,
    )


def _pinned_to_baseline(project: Project, baseline: RunResult | None) -> tuple[PinnedProject, bool]:
    """The project under what the baseline recorded, and whether that settles the judge too (it recorded its policy)."""
    if baseline is None:
        return PinnedProject(project), False
    pinned = pin_to_baseline(project.config, baseline.meta)
    return (
        PinnedProject(dataclasses.replace(project, config=pinned.config), pinned.changes, pinned.notice),
        baseline.meta.policy is not None,
    )


def prepare(
    project: Project,
    baseline: RunResult | None,
    *,
    accepted: Sequence[Acceptance] = (),
    options: GateOptions = GateOptions(),
    base_config: BaseConfig | None = None,
) -> PinnedProject:
    """Before the run: refuse the fake judge where it may not judge, refuse an unusable baseline,
    and pin the project to the baseline's policy. The face then runs the pinned project."""
    refuse_a_fake_judge(project, baseline, options)
    if baseline is not None and options.compare:
        try:
            check_baseline_usable(baseline)
        except BrokenRun as exc:
            raise BrokenRun(str(exc).replace(REBASELINE_HINT, options.rebaseline_hint)) from None
    return dataclasses.replace(
        pin(project, baseline, options, base_config), confirm_each=frozenset(a.id for a in accepted)
    )


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
        with_carried = carry_forward(
            with_current_ids(baseline, head)[0], head
        )  # a renamed question keeps its verdict too
        if with_carried is not head:
            head = with_carried
            carried = tuple(q.id for q in head.questions if q.carried is not None)
    gate = pinned.project.config.gate
    if not options.compare and not head.meta.broken:
        outcome = GateOutcome(options.uncompared.verdict, head, 0, notices=_some(options.uncompared.notice))
    else:
        outcome = compare_runs(
            baseline,
            head,
            gate=gate,
            accepted=accepted,
            history=history,
            options=options,
            policy_changes=pinned.policy_changes,
            notices=_some(pinned.notice),
            today=today,
        )
    outcome = dataclasses.replace(outcome, carried=carried)
    if options.check_calibration and outcome.verdict != Verdict.BROKEN and gate.require_calibration:
        outcome = _require_calibration(outcome, history, today)
    return _with_exit_code(outcome, options)


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
    today = today or datetime.now(UTC).date()
    calibration = history.calibration(head, today)
    if head.meta.broken:
        max_error_rate = (gate or recorded_gate(head.meta)).max_error_rate
        measured = judge_free_regressions(baseline, head) if baseline is not None else ()
        return _with_exit_code(
            GateOutcome(
                Verdict.BROKEN,
                head,
                0,
                notices=(*notices, broken_notice(max_error_rate, options)),
                calibration=calibration,
                measured=measured,
            ),
            options,
        )
    if baseline is None:
        leaks = _leaks_without_baseline(head, options.fail_on or (gate.fail_on if gate else None))
        verdict = Verdict.FAIL if leaks else options.bootstrap.verdict
        return _with_exit_code(
            GateOutcome(
                verdict,
                head,
                0,
                notices=(*notices, *_some(options.bootstrap.notice), *_some(leaks)),
                calibration=calibration,
            ),
            options,
        )
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
        return _with_exit_code(
            GateOutcome(
                verdict, head, 0, notices=(*notices, f"Not compared: {words}"), calibration=calibration
            ),
            options,
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
    return _with_exit_code(
        GateOutcome(verdict, head, 0, comparison, notices, policy_changes, calibration=calibration), options
    )


def accepted_in_force(entries: Sequence[Acceptance], head: RunResult) -> list[dict]:
    """The accepted entries that still apply to the run's question set, for its history line."""
    return in_force(tuple(entries), question_hashes(head))


def question_hashes(head: RunResult) -> dict[str, str]:
    return {q.id: q.question_hash for q in head.questions}


def baseline_hashes(baseline: RunResult, comparison: Comparison) -> dict[str, str]:
    """The baseline's question hashes, under the ids of this run (renamed questions follow)."""
    hashes = question_hashes(baseline)
    for new, old in comparison.renamed:  # one baseline question may be re-added under several ids
        hashes[new] = hashes.get(old, "")
    for _, old in comparison.renamed:
        hashes.pop(old, None)
    return hashes


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


def refuse_a_fake_judge(project: Project, baseline: RunResult | None, options: GateOptions) -> None:
    """The fake judge (`judge.provider: fake`) is a dry run whose verdicts are scripted: a run
    judged by it never becomes a baseline, and is never compared with as one."""
    if options.may_become_baseline and project.config.judge.provider == FAKE_JUDGE:
        raise RagCiError(
            "this run may become the baseline, and its judge is `fake`, a deterministic "
            "offline dry run whose verdicts mean nothing. Set a real judge in the config (judge.provider) "
            "for runs on the default branch; use the fake judge for dry runs only (`rag-ci run --judge fake`)."
        )
    if baseline is not None:
        refuse_a_fake_judged_baseline(baseline)


def refuse_a_fake_judged_baseline(baseline: RunResult) -> None:
    judge = baseline.meta.judge
    if judge is not None and judge.provider == FAKE_JUDGE:
        raise RagCiError(
            f"the baseline (commit {baseline.meta.git_sha or 'unknown'}) was judged by the fake judge, a dry run whose "
            "verdicts mean nothing: it cannot gate anything. Use a run judged by a real judge (or a judge-free run) as the baseline."
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


def _with_exit_code(outcome: GateOutcome, options: GateOptions) -> GateOutcome:
    return dataclasses.replace(outcome, exit_code=options.exit_codes.get(outcome.verdict, EXIT_PASS))


def _some(text: str | None) -> tuple[str, ...]:
    return (text,) if text else ()
