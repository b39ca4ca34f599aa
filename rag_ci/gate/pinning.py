"""Before the run (rag_ci.gate): refuse the fake judge where it may not judge, refuse an unusable
baseline, and pin the project to the baseline's policy. The face then runs the pinned project."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from rag_ci.core.comparison.compare import REBASELINE_HINT, check_baseline_usable
from rag_ci.core.comparison.policy import KEYLESS_JUDGES, pin_judge_to_base, pin_to_baseline
from rag_ci.core.results import RunResult
from rag_ci.core.review.accepted import Acceptance
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.files.project import Project
from rag_ci.gate.outcome import GateOptions, some

FAKE_JUDGE = "fake"


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
    notices = [*some(pinned.notice), *some(judged.notice)]
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
