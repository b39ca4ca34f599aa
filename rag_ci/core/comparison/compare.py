"""Comparison with the baseline (docs/gate.md): regressions, worse, gains, changes, deltas.

`compare` runs in stages, each taking what the one before produced:

    comparable   the metrics both runs define alike, the others left out of both
                 (rag_ci.core.comparison.comparability)
    identity     a renamed question is the same question (rag_ci.core.comparison.identity), and
                 the baseline's verdicts are read as the judge's confirmation established them
                 (rag_ci.core.comparison.judge_noise)
    questions    each question in its row: regression, worse, gain, changed, new, removed, leak
                 (rag_ci.core.comparison.sorting)
    whole run    the deltas of the runs as a whole (rag_ci.core.comparison.run_deltas), then the
                 noise review: flaky questions, significance, budgets (rag_ci.core.comparison.noise_review)

A metric whose definition differs between the runs is left out of both sides' verdicts and
listed as not comparable; the others still gate. docs/gate.md has the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, replace

from rag_ci.core.comparison.comparability import (
    REBASELINE_HINT,
    check_compatible,
    comparable_runs,
    incompatibilities,
)
from rag_ci.core.comparison.comparison import Comparison, Delta
from rag_ci.core.comparison.conversation_turns import follow_turns
from rag_ci.core.comparison.identity import renamed_keys, with_current_ids
from rag_ci.core.comparison.judge_cost import judge_cost
from rag_ci.core.comparison.judge_noise import judge_noise, with_established_baseline
from rag_ci.core.comparison.noise_review import review_noise
from rag_ci.core.comparison.question_change import QuestionChange, failing_with_changed_sources
from rag_ci.core.comparison.run_deltas import run_deltas
from rag_ci.core.comparison.sorting import CHUNK_IDS_UNSTABLE, sort_questions
from rag_ci.core.config import GateConfig
from rag_ci.core.results import RunResult
from rag_ci.errors import BrokenRun, IncompatibleBaseline

# Where they were defined before the stages had modules of their own: importers keep these names.
__all__ = [
    "CHUNK_IDS_UNSTABLE",
    "REBASELINE_HINT",
    "Comparison",
    "Delta",
    "QuestionChange",
    "check_baseline_usable",
    "check_compatible",
    "check_usable",
    "compare",
    "incompatibilities",
    "judge_free_regressions",
]


def check_usable(base: RunResult, head: RunResult) -> None:
    """A broken run (error share above gate.max_error_rate) is not a result: refuse it."""
    check_baseline_usable(base)
    if head.meta.broken:
        raise BrokenRun(f"This run is broken, not a result: {head.meta.broken}")


def check_baseline_usable(base: RunResult) -> None:
    """A broken baseline compares with nothing: said before anything is asked of the target."""
    if base.meta.broken:
        raise BrokenRun(
            f"The baseline (commit {base.meta.git_sha or 'unknown'}) is a broken run, not a result: "
            f"{base.meta.broken}\n{REBASELINE_HINT}"
        )


def judge_free_regressions(base: RunResult, head: RunResult) -> tuple[QuestionChange, ...]:
    """What a broken run still measured: questions whose judge-free metrics (retrieval and
    answer checks, which need no judge) passed on the baseline and fail now. Listed beside the
    broken run's errors, never gated: a broken run is not a result."""
    if base.meta.broken:
        return ()
    judged = {
        name
        for run in (base, head)
        for q in run.questions
        for name, m in q.metrics.items()
        if m.kind == "judge"
    }
    try:
        found = _question_by_question(
            base, head, fail_on="any_regression", top_latency=0, leave_out=judged, judge_free=True
        )
    except IncompatibleBaseline:
        return ()
    return tuple(c for c in found.comparison.regressions if c.new_verdict == "fail")


def compare(
    base: RunResult,
    head: RunResult,
    *,
    fail_on: str = "any_regression",
    top_latency: int = 5,
    gate: GateConfig | None = None,
    known_flaky: Mapping[str, float] | None = None,
) -> Comparison:
    """Compare two runs question by question.

    Raises BrokenRun when either run is broken, IncompatibleBaseline when they can't be
    compared. `gate` (alpha, budgets) and `known_flaky` (question id -> pass rate on main,
    from the history) feed the noise review: flaky questions, significance, budgets.
    """
    check_usable(base, head)
    found = _question_by_question(
        base, head, fail_on=fail_on, top_latency=top_latency, known_flaky=known_flaky
    )
    base, head, comparison = found.base, found.head, found.comparison
    gate = gate or GateConfig()
    noise = review_noise(
        [c.id for c in comparison.regressions],
        base,
        head,
        alpha=gate.alpha,
        budgets=gate.budgets.model_dump(),
        known_flaky=found.known_flaky,
    )
    comparison = replace(
        comparison,
        regressions=tuple(c for c in comparison.regressions if c.id not in noise.cleared),
        flaky=noise.flaky,
        significance=noise.significance,
        budgets=noise.budgets,
        alpha=noise.alpha,
        target_calls=noise.target_calls,
        latency_rise_bounds=noise.latency_rise_bounds,
        judge_cost_split=judge_cost(base, head),
    )
    return follow_turns(comparison, base, head)  # a conversation's turns: the one that broke, those after it


@dataclass(frozen=True)
class _QuestionByQuestion:
    """What the stages before the noise review produced: the runs as compared (comparable
    metrics only, the baseline under the ids of now, its verdicts as confirmation established
    them), the known-flaky questions under the ids of now, and the comparison so far."""

    base: RunResult
    head: RunResult
    known_flaky: Mapping[str, float] | None
    comparison: Comparison


def _question_by_question(
    base: RunResult,
    head: RunResult,
    *,
    fail_on: str,
    top_latency: int,
    known_flaky: Mapping[str, float] | None = None,
    leave_out: Set[str] = frozenset(),
    judge_free: bool = False,
) -> _QuestionByQuestion:
    """The stages up to the noise review, each taking what the one before produced. `judge_free`
    (a broken run's measure): the carried baseline verdicts are taken whole, and nothing is
    listed as not comparable."""
    runs = comparable_runs(base, head, leave_out=leave_out)
    base, renamed = with_current_ids(runs.base, runs.head)  # a renamed question is the same question
    if known_flaky and renamed:
        known_flaky = renamed_keys(known_flaky, renamed)
    head = runs.head
    base = with_established_baseline(base, head)  # the baseline's verdicts as the judge confirmed them
    unestablished = judge_noise(head)
    not_comparable = () if judge_free else runs.not_comparable
    rows = sort_questions(
        base, head, left_out={n.name for n in not_comparable}, renamed=renamed, top_latency=top_latency
    )
    source_changed = failing_with_changed_sources(base, head, {c.id for c in rows.gating})
    comparison = replace(
        rows,
        **run_deltas(base, head),
        fail_on=fail_on,
        base_sha=base.meta.git_sha,
        head_sha=head.meta.git_sha,
        not_comparable=not_comparable,
        renamed=tuple(sorted(renamed.items())),
        judge_noise=unestablished,
        unstable=tuple(dict.fromkeys(n.id for n in unestablished)),  # one list: the same verdicts
        source_changed_failing=source_changed,
    )
    return _QuestionByQuestion(base, head, known_flaky, comparison)
