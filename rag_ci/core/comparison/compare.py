"""Comparison with the baseline (docs/gate.md): regressions, worse, gains, changes, deltas.

Questions are joined by id. A regression is a question that passed on the
baseline and does not pass now; a question that already failed and now leaks,
errors or loses a metric that passed is worse, and gates the same way; a routing
leak gates wherever it appears. A question whose content hash changed is
reported as changed instead, because it no longer asks the same thing. A metric
whose definition differs between the runs is left out of both sides' verdicts and
listed as not comparable (rag_ci.core.comparison.comparability); the others still gate.
When the baseline errored on a question, its last known good verdict (carried
forward by rag_ci.core.comparison.carry) stands in for it. docs/gate.md has the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from rag_ci.core.comparison.acceptance import AcceptedChange, StaleAcceptance
from rag_ci.core.comparison.budgets import BudgetCheck, latency_rise_bounds
from rag_ci.core.comparison.comparability import (
    NotComparable,
    not_comparable_metrics,
    schema_problems,
    without_metrics,
)
from rag_ci.core.comparison.identity import renamed_keys, with_current_ids
from rag_ci.core.comparison.judge_cost import JudgeCost, judge_cost
from rag_ci.core.comparison.judge_noise import JudgeNoise, judge_noise, with_established_baseline
from rag_ci.core.comparison.noise import FlakyQuestion
from rag_ci.core.comparison.noise_review import SignificanceRow, review_noise
from rag_ci.core.comparison.question_change import QuestionChange as QuestionChange
from rag_ci.core.comparison.question_change import (
    failing_with_changed_sources,
    question_change,
    usable_baseline,
    what_got_worse,
)
from rag_ci.core.comparison.retrieval_diff import chunk_identity
from rag_ci.core.config import GateConfig
from rag_ci.core.results import GroupAggregate, QuestionResult, RunResult
from rag_ci.errors import BrokenRun, IncompatibleBaseline

# How to get a comparable baseline again, in words that hold wherever rag-ci runs; the
# GitHub Action says it its own way (rag_ci.action.baseline.in_actions_words).
REBASELINE_HINT = "Re-baseline: make a fresh run on the base branch (`rag-ci run` on main) the new baseline."
CHUNK_IDS_UNSTABLE = "chunk ids are not stable across index builds: compared by text"


@dataclass(frozen=True)
class Delta:
    old: float | None
    new: float | None

    @property
    def change(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old


@dataclass(frozen=True)
class Comparison:
    # Question by question (rag_ci.core.comparison.question_change).
    regressions: tuple[QuestionChange, ...]  # passed on the baseline, fail now: gate
    gains: tuple[QuestionChange, ...]
    changed: tuple[QuestionChange, ...]  # content hash differs: reported, not a regression
    new: tuple[QuestionChange, ...]
    removed: tuple[QuestionChange, ...]
    unstable: tuple[str, ...]  # judge verdicts whose confirmation runs disagreed
    worse: tuple[QuestionChange, ...] = ()  # failed on the baseline, worse now: gates
    leaks: tuple[QuestionChange, ...] = ()  # routing leaks not already a regression or worse: gate
    # The baseline errored and nothing could be carried: listed, not gating (but a leak still is).
    no_baseline_verdict: tuple[QuestionChange, ...] = ()
    carried: tuple[QuestionChange, ...] = ()  # compared with a carried baseline verdict
    # Deltas of the whole run.
    metric_means: dict[str, Delta] = field(default_factory=dict)
    latency_p50_s: Delta = Delta(None, None)
    latency_p95_s: Delta = Delta(None, None)
    generator_cost_usd: Delta = Delta(None, None)
    judge_cost_usd: Delta = Delta(None, None)
    largest_latency_changes: tuple[QuestionChange, ...] = ()
    per_corpus_pass_rate: dict[str, Delta] = field(default_factory=dict)
    per_tag_pass_rate: dict[str, Delta] = field(default_factory=dict)
    # Questions each metric scored, (baseline, this run), against the questions of each run:
    # a mean over fewer questions is shown with its count, never silently.
    metric_scored: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    questions_n: tuple[int, int] = (0, 0)
    passed_n: tuple[int, int] = (0, 0)  # questions passing on the compared metrics, (baseline, this run)
    renamed: tuple[tuple[str, str], ...] = ()  # (id now, id on the baseline): same question hash, compared
    # The runs and the policy compared under.
    fail_on: str = "any_regression"
    base_sha: str | None = None
    head_sha: str | None = None
    notes: tuple[str, ...] = ()
    # Metrics whose definition differs between the runs: left out of both sides' verdicts.
    not_comparable: tuple[NotComparable, ...] = ()
    # What the PR's own rag-ci.yml would change in the baseline's gate policy (preview only).
    policy_changes: tuple[str, ...] = ()
    # Noise control (rag_ci.core.comparison.noise_review, docs/noise.md).
    flaky: tuple[FlakyQuestion, ...] = ()  # flips the evidence does not support, not gating
    significance: tuple[SignificanceRow, ...] = ()  # paired tests of every pass-rate change
    budgets: tuple[BudgetCheck, ...] = ()
    alpha: float = 0.05
    target_calls: int = 0  # calls to the RAG this run, re-asks included
    # Accepted regressions (rag_ci.core.review.accepted): out of `regressions`/`worse`, listed with
    # their reason; entries of the accepted file that matched nothing, or lapsed.
    accepted: tuple[AcceptedChange, ...] = ()
    stale_accepted: tuple[StaleAcceptance, ...] = ()
    # Failed on both runs, unedited, and a document they cite changed in this PR: not gating, said.
    source_changed_failing: tuple[QuestionChange, ...] = ()
    # Judged flips confirmation did not establish: still split, or the baseline's pass was noise. Not gating.
    judge_noise: tuple[JudgeNoise, ...] = ()
    # Latency percentiles that rose: the value this run is above with confidence (budgets.latency_rise_bounds).
    latency_rise_bounds: dict[str, float | None] = field(default_factory=dict)
    judge_cost_split: JudgeCost | None = None  # judged vs reused verdicts, when the cache gave some

    @property
    def budget_breaches(self) -> tuple[BudgetCheck, ...]:
        return tuple(b for b in self.budgets if b.breached)

    @property
    def significant_drop(self) -> bool:
        """The overall pass rate fell, and McNemar says it is not noise."""
        return any(row.scope == "overall" and row.test.significant_drop for row in self.significance)

    @property
    def gating(self) -> tuple[QuestionChange, ...]:
        """The questions that fail the gate: regressions, worse, and every routing leak."""
        return self.regressions + self.worse + self.leaks

    @property
    def leaking(self) -> tuple[QuestionChange, ...]:
        """Every question that leaks now, whichever list it is in."""
        return tuple(c for c in self.gating if c.new_verdict == "routing_error")

    @property
    def removed_passing(self) -> tuple[QuestionChange, ...]:
        """Questions the PR removed that passed on the baseline: not gated, shown at the top."""
        return tuple(c for c in self.removed if c.old_verdict == "pass")

    @property
    def new_failing(self) -> tuple[QuestionChange, ...]:
        """Questions the PR added that do not pass: not gated (a leak is), shown at the top."""
        return tuple(c for c in self.new if c.new_verdict != "pass")

    @property
    def edited_failing(self) -> tuple[QuestionChange, ...]:
        """Questions the PR edited (another hash) that passed on the baseline and fail now."""
        return tuple(c for c in self.changed if c.old_verdict == "pass" and c.new_verdict != "pass")

    @property
    def verdict(self) -> Literal["pass", "fail"]:
        if self.fail_on == "never":
            return "pass"
        if self.budget_breaches or self.leaking:  # a routing leak gates under every policy (docs/gate.md)
            return "fail"
        if self.fail_on == "significant_drop":
            return "fail" if self.significant_drop else "pass"
        return "fail" if self.gating else "pass"

    def to_dict(self) -> dict[str, Any]:
        def changes(items: tuple[QuestionChange, ...]) -> list[dict[str, Any]]:
            return [{**asdict(c), "latency_delta_s": c.latency_delta_s} for c in items]

        def delta(d: Delta) -> dict[str, Any]:
            return {"old": d.old, "new": d.new, "change": d.change}

        return {
            "verdict": self.verdict,
            "regressions": changes(self.regressions),
            "gains": changes(self.gains),
            "changed": changes(self.changed),
            "new": changes(self.new),
            "removed": changes(self.removed),
            "worse": changes(self.worse),
            "leaks": changes(self.leaks),
            "no_baseline_verdict": changes(self.no_baseline_verdict),
            "carried": changes(self.carried),
            "unstable": list(self.unstable),
            "metric_means": {k: delta(v) for k, v in self.metric_means.items()},
            "latency": {"p50_s": delta(self.latency_p50_s), "p95_s": delta(self.latency_p95_s)},
            "cost": {
                "generator_usd": delta(self.generator_cost_usd),
                "judge_usd": delta(self.judge_cost_usd),
            },
            "largest_latency_changes": changes(self.largest_latency_changes),
            "per_corpus_pass_rate": {k: delta(v) for k, v in self.per_corpus_pass_rate.items()},
            "per_tag_pass_rate": {k: delta(v) for k, v in self.per_tag_pass_rate.items()},
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "notes": list(self.notes),
            "flaky": [{**asdict(f), "pass_rate": f.pass_rate} for f in self.flaky],
            "significance": [
                {
                    "scope": r.scope,
                    "name": r.name,
                    **asdict(r.test),
                    "delta": r.test.delta,
                    "significant": r.test.significant,
                }
                for r in self.significance
            ],
            "budgets": [{**asdict(b), "breached": b.breached} for b in self.budgets],
            "target_calls": self.target_calls,
            "not_comparable": [asdict(n) for n in self.not_comparable],
            "policy_changes": list(self.policy_changes),
            "accepted": [
                {**asdict(a.change), "reasons": list(a.reasons), "metrics": list(a.metrics)}
                for a in self.accepted
            ],
            "stale_accepted": [asdict(s) for s in self.stale_accepted],
            "metric_scored": {k: list(v) for k, v in self.metric_scored.items()},
            "passed_n": list(self.passed_n),
            "renamed": [{"id": new, "baseline_id": old} for new, old in self.renamed],
            "source_changed_failing": changes(self.source_changed_failing),
            "judge_noise": [{**asdict(n), "label": n.label} for n in self.judge_noise],
        }


def incompatibilities(base: RunResult, head: RunResult) -> list[str]:
    """What makes the two runs incomparable as a whole; empty when they can be compared.

    Metric thresholds, parameters and the judge are not here: a metric whose definition
    changed is only left out (`Comparison.not_comparable`), the others are still gated."""
    return schema_problems(base.meta, head.meta)


def check_compatible(base: RunResult, head: RunResult) -> None:
    problems = incompatibilities(base, head)
    if problems:
        raise IncompatibleBaseline(
            "The baseline cannot be compared with this run:\n  - "
            + "\n  - ".join(problems)
            + "\n"
            + REBASELINE_HINT
        )


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
    if base.meta.broken or schema_problems(base.meta, head.meta):
        return ()
    judged = {
        name
        for run in (base, head)
        for q in run.questions
        for name, m in q.metrics.items()
        if m.kind == "judge"
    }
    left_out = judged | {n.name for n in not_comparable_metrics(base.meta, head.meta)}
    base, head = without_metrics(base, left_out), without_metrics(head, left_out)
    base, renamed = with_current_ids(base, head)
    found = _compare(base, head, fail_on="any_regression", top_latency=0, not_comparable=(), renamed=renamed)
    return tuple(c for c in found.regressions if c.new_verdict == "fail")


def _rates(groups: dict[str, GroupAggregate]) -> dict[str, float]:
    return {k: g.pass_rate for k, g in groups.items()}


def _rate_deltas(old: dict[str, GroupAggregate], new: dict[str, GroupAggregate]) -> dict[str, Delta]:
    o, n = _rates(old), _rates(new)
    return {k: Delta(o.get(k), n.get(k)) for k in sorted(set(o) | set(n))}


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
    check_compatible(base, head)
    base, renamed = with_current_ids(base, head)  # a renamed question is the same question
    base = with_established_baseline(base, head)  # the baseline's verdicts as the judge confirmed them
    if known_flaky and renamed:
        known_flaky = renamed_keys(known_flaky, renamed)
    not_comparable = not_comparable_metrics(base.meta, head.meta)
    if not_comparable:  # left out of both sides, for the classification and the noise review alike
        left_out = {n.name for n in not_comparable}
        base, head = without_metrics(base, left_out), without_metrics(head, left_out)
    comparison = _compare(
        base, head, fail_on=fail_on, top_latency=top_latency, not_comparable=not_comparable, renamed=renamed
    )
    gate = gate or GateConfig()
    noise = review_noise(
        [c.id for c in comparison.regressions],
        base,
        head,
        alpha=gate.alpha,
        budgets=gate.budgets.model_dump(),
        known_flaky=known_flaky,
    )
    return replace(
        comparison,
        regressions=tuple(c for c in comparison.regressions if c.id not in noise.cleared),
        flaky=noise.flaky,
        significance=noise.significance,
        budgets=noise.budgets,
        alpha=noise.alpha,
        target_calls=noise.target_calls,
        judge_noise=judge_noise(head),
        source_changed_failing=failing_with_changed_sources(base, head, {c.id for c in comparison.gating}),
        latency_rise_bounds=latency_rise_bounds(base, head, gate.alpha),
        judge_cost_split=judge_cost(base, head),
    )


def _largest_latency_changes(both: list[QuestionChange | _Steady], top: int) -> list[QuestionChange]:
    with_latency = [c for c in both if c.latency_delta_s is not None]
    return [
        question_change(c.old, c.new) if isinstance(c, _Steady) else c
        for c in sorted(with_latency, key=lambda c: abs(c.latency_delta_s or 0.0), reverse=True)[:top]
    ]


def _compare(
    base: RunResult,
    head: RunResult,
    *,
    fail_on: str,
    top_latency: int,
    not_comparable: tuple[NotComparable, ...],
    renamed: Mapping[str, str],
) -> Comparison:
    old_by_id, new_by_id = base.by_id(), head.by_id()
    left_out = {n.name for n in not_comparable}
    regressions, gains, changed, worse, leaks, unjudged, carried = [], [], [], [], [], [], []
    both: list[QuestionChange | _Steady] = []  # every question of both runs, in head order
    for qid, new in new_by_id.items():
        recorded = old_by_id.get(qid)
        if recorded is None:
            continue
        if (
            recorded.passed
            and new.passed
            and recorded.question_hash == new.question_hash
            and qid not in renamed
        ):
            both.append(
                _Steady.of(recorded, new)
            )  # most questions of a large run: no row to show, see _Steady
            continue
        old = usable_baseline(recorded, left_out)
        change = question_change(old, new)
        if qid in renamed:
            change = replace(change, renamed_from=renamed[qid])
        if old is not recorded and old.question_hash == new.question_hash:
            change = replace(
                change,
                baseline_carried=True,
                carried_from_sha=recorded.carried.from_sha if recorded.carried else None,
            )
            carried.append(change)
        both.append(change)
        if old.question_hash != new.question_hash:
            changed.append(change)
        elif old.verdict == "error":
            unjudged.append(change)  # errored on the baseline and nothing to carry
        elif old.passed and not new.passed:
            regressions.append(change)
            continue
        elif not old.passed and new.passed:
            gains.append(change)
        elif why := what_got_worse(old, new, change):
            worse.append(replace(change, worse_because=why))
            continue
        if new.verdict == "routing_error":
            leaks.append(change)  # still leaking, or on a changed question: a leak always gates
    new_only = [question_change(None, r) for qid, r in new_by_id.items() if qid not in old_by_id]
    leaks.extend(c for c in new_only if c.new_verdict == "routing_error")
    removed = [question_change(r, None) for qid, r in old_by_id.items() if qid not in new_by_id]
    largest = _largest_latency_changes(both, top_latency)
    ba, ha = base.aggregates, head.aggregates
    base_scored, head_scored = _scored(base), _scored(head)
    same_text = sum(c.same_text_contexts for c in both)
    # Most chunks came back with their text but under another id: the index mints ids per build.
    ids_unstable = same_text >= 3 and 2 * sum(c.same_text_other_id for c in both) > same_text
    return Comparison(
        regressions=tuple(regressions),
        gains=tuple(gains),
        changed=tuple(changed),
        new=tuple(new_only),
        removed=tuple(removed),
        unstable=tuple(q.id for q in head.questions if q.unstable),
        metric_means={
            name: Delta(
                ba.per_metric[name].mean if name in ba.per_metric else None,
                ha.per_metric[name].mean if name in ha.per_metric else None,
            )
            for name in sorted(set(ba.per_metric) | set(ha.per_metric))
        },
        latency_p50_s=Delta(ba.latency_p50_s, ha.latency_p50_s),
        latency_p95_s=Delta(ba.latency_p95_s, ha.latency_p95_s),
        generator_cost_usd=Delta(ba.generator_cost_usd, ha.generator_cost_usd),
        judge_cost_usd=Delta(ba.judge_cost_usd, ha.judge_cost_usd),
        largest_latency_changes=tuple(largest),
        per_corpus_pass_rate=_rate_deltas(ba.per_corpus, ha.per_corpus),
        per_tag_pass_rate=_rate_deltas(ba.per_tag, ha.per_tag),
        worse=tuple(worse),
        leaks=tuple(leaks),
        no_baseline_verdict=tuple(unjudged),
        carried=tuple(carried),
        fail_on=fail_on,
        base_sha=base.meta.git_sha,
        head_sha=head.meta.git_sha,
        not_comparable=not_comparable,
        metric_scored={
            name: (
                base_scored[name] if name in ba.per_metric else None,
                head_scored[name] if name in ha.per_metric else None,
            )
            for name in sorted(set(ba.per_metric) | set(ha.per_metric))
        },
        questions_n=(ba.overall.n, ha.overall.n),
        passed_n=(ba.overall.passed, ha.overall.passed),
        renamed=tuple(sorted(renamed.items())),
        notes=(CHUNK_IDS_UNSTABLE,) if ids_unstable else (),
    )


@dataclass(frozen=True, slots=True)
class _Steady:
    """A question that passed on both runs, unchanged: no row of the comparison shows it, so
    its QuestionChange is made only if it is among the largest latency changes (comparing
    50,000 questions spent most of its time making one for each). It answers what every
    question contributes: its latency delta and its chunks' identity."""

    old: QuestionResult
    new: QuestionResult
    same_text_contexts: int
    same_text_other_id: int

    @classmethod
    def of(cls, old: QuestionResult, new: QuestionResult) -> _Steady:
        return cls(old, new, *chunk_identity(old.contexts, new.contexts))

    @property
    def latency_delta_s(self) -> float | None:
        if self.old.latency_s is None or self.new.latency_s is None:
            return None
        return self.new.latency_s - self.old.latency_s


def _scored(result: RunResult) -> Counter[str]:
    """Per metric, how many questions it scored (one pass over the run)."""
    return Counter(
        name for q in result.questions for name, metric in q.metrics.items() if metric.score is not None
    )
