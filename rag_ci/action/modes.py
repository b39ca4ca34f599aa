"""The GitHub Action's modes as a table: which event gets which mode, and what each mode does.

Every difference between the modes is a field of its `Plan` (in the spirit of
python-coverage-comment-action's activities), so `rag_ci.action.entry` runs one sequence of steps
and asks the plan at each one instead of testing the mode's name; the plan's `gate` is the
options of the gate (rag_ci.gate), which decides the verdict and the exit code:

    mode        event                     baseline          cache  compare  comment  history  may become the baseline
    pr          pull_request              the PR's base     yes    gate     yes      no       no
    merge-queue merge_group               the queue's base  yes    gate     no       no       no
    baseline    push to a branch          verdict cache     yes    no       no       main     yes
    full        workflow_dispatch, cron   this branch's     no     gate     no       main     yes
    (a baseline is the nearest trusted ancestor, rag_ci.action.nearest_baseline; the history line
    and the data branch's copy are the default branch's only)
    rebaseline  full + `rebaseline: true` none              no     no       no       yes      yes
    comment     workflow_run              (posts a saved comment; evaluates nothing)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rag_ci.action.settings import Settings
from rag_ci.errors import RagCiError
from rag_ci.gate import GateOptions, Uncompared, Verdict


class Mode(enum.StrEnum):
    PR = "pr"
    BASELINE = "baseline"
    FULL = "full"
    REBASELINE = "rebaseline"  # the `full` input mode with `rebaseline: true`
    COMMENT = "comment"
    MERGE_QUEUE = "merge-queue"  # a pull request's gate on a merge_group event (no PR to comment on)


class BaselineUse(enum.Enum):
    GATE = "gate"  # compared with: a missing artifact is a bootstrap, an unusable one an error
    CACHE = "cache"  # only saves judge calls: a problem getting it is a warning
    NONE = "none"  # not fetched: this run replaces it


class BaseBranch(enum.Enum):
    PULL_REQUEST_BASE = "pull request base"  # preferring the run at the merge base
    DEFAULT_BRANCH = "default branch"  # preferring the run at the commit pushed over
    MERGE_QUEUE_BASE = "merge queue base"  # preferring the run at merge_group.base_sha


@dataclass(frozen=True)
class Plan:
    mode: Mode
    evaluates: bool  # replays the question set (every mode but comment)
    base_branch: BaseBranch = BaseBranch.DEFAULT_BRANCH
    baseline: BaselineUse = BaselineUse.GATE
    use_cache: bool = True  # verdicts cached in the baseline are reused (False: every answer re-judged)
    # The gate's options (rag_ci.gate.GateOptions); the uncompared notice's format fields: {branch}
    # (this run's), {artifact} (the baseline's name). `may_become_baseline`: the workflow may upload
    # this run's results.json as the baseline.
    gate: GateOptions = GateOptions(pin_policy=False, carry_forward=False)
    history: bool = False  # a line in the data branch's history, on the default branch
    trend: bool = False  # the history's trend in the report
    audit_sample: bool = False  # a blind audit sample in the output folder
    comment: bool = False  # the sticky PR comment
    check_run: bool = False  # the `rag-ci gate` check run on the gated commit (a PR's head, a queue's commit)

    @property
    def produces_baseline(self) -> bool:
        return self.gate.may_become_baseline


_BECOMES_THE_BASELINE = "this run's results.json becomes the baseline once the workflow uploads it as"

PLANS: Mapping[Mode, Plan] = MappingProxyType(
    {
        plan.mode: plan
        for plan in (
            Plan(
                Mode.PR,
                evaluates=True,
                base_branch=BaseBranch.PULL_REQUEST_BASE,
                gate=GateOptions(pin_policy=True, carry_forward=False),
                trend=True,
                comment=True,
                check_run=True,
            ),
            # The queue's commit is the pull request merged onto the queue's base: gated the same way;
            # no pull request to comment on (the job summary and the annotations carry the result).
            # A queue waits for the branch's required checks on its own commit: the check run goes there.
            Plan(
                Mode.MERGE_QUEUE,
                evaluates=True,
                base_branch=BaseBranch.MERGE_QUEUE_BASE,
                gate=GateOptions(pin_policy=True, carry_forward=False),
                trend=True,
                check_run=True,
            ),
            Plan(
                Mode.BASELINE,
                evaluates=True,
                baseline=BaselineUse.CACHE,
                gate=GateOptions(
                    pin_policy=False,
                    compare=False,
                    may_become_baseline=True,
                    uncompared=Uncompared(
                        Verdict.BASELINE,
                        f"Baseline run on `{{branch}}`: {_BECOMES_THE_BASELINE} the `{{artifact}}` artifact.",
                    ),
                ),
                history=True,
            ),
            Plan(
                Mode.FULL,
                evaluates=True,
                use_cache=False,
                gate=GateOptions(
                    pin_policy=False,
                    all_metrics_comparable=True,
                    check_calibration=True,
                    may_become_baseline=True,
                ),
                history=True,
                audit_sample=True,
            ),
            Plan(
                Mode.REBASELINE,
                evaluates=True,
                baseline=BaselineUse.NONE,
                use_cache=False,
                gate=GateOptions(
                    pin_policy=False,
                    compare=False,
                    check_calibration=True,
                    may_become_baseline=True,
                    uncompared=Uncompared(
                        Verdict.REBASELINE,
                        f"Re-baseline: full evaluation without comparison; {_BECOMES_THE_BASELINE} `{{artifact}}`.",
                    ),
                ),
                history=True,
                audit_sample=True,
            ),
            Plan(
                Mode.COMMENT,
                evaluates=False,
                baseline=BaselineUse.NONE,
                gate=GateOptions(pin_policy=False, carry_forward=False, compare=False),
            ),
        )
    }
)


def resolve_mode(settings: Settings) -> Mode | None:
    """The mode to run, or None when this event has nothing to do (explained by the caller)."""
    mode = _input_mode(settings)
    if mode is Mode.FULL and settings.rebaseline:
        return Mode.REBASELINE
    if mode is Mode.PR and settings.event_name == "merge_group":
        return Mode.MERGE_QUEUE
    return mode


def _input_mode(settings: Settings) -> Mode | None:
    if settings.mode != "auto":
        return Mode(settings.mode)
    event = settings.event_name
    if event == "pull_request":
        return Mode.PR
    if event == "merge_group":
        return Mode.MERGE_QUEUE
    if event == "pull_request_target":
        raise RagCiError(
            "rag-ci does not run on `pull_request_target` by itself: that event has a write token and "
            "secrets, and evaluating the PR's code there hands both to it. Run on `pull_request`, and post "
            "fork comments from a `workflow_run` workflow (docs/action.md). Set `mode: pr` to override."
        )
    if event == "push":  # to a branch the workflow runs on: the default branch, a release branch
        return Mode.BASELINE if settings.branch else None
    if event in ("workflow_dispatch", "schedule"):
        return Mode.FULL
    if event == "workflow_run":
        return Mode.COMMENT
    raise RagCiError(
        f"rag-ci does not know what to do on `{event or 'no event'}`; set the `mode` input (pr, baseline, full, comment)"
    )
