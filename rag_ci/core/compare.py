"""Comparison with the baseline (DESIGN §6): regressions, worse, gains, changes, deltas.

Questions are joined by id. A regression is a question that passed on the
baseline and does not pass now; a question that already failed and now leaks,
errors or loses a metric that passed is worse, and gates the same way; a routing
leak gates wherever it appears. A question whose content hash changed is
reported as changed instead, because it no longer asks the same thing. A metric
whose definition differs between the runs is left out of both sides' verdicts and
listed as not comparable (rag_ci.core.comparability); the others still gate.
When the baseline errored on a question, its last known good verdict (carried
forward by rag_ci.core.carry) stands in for it. docs/gate.md has the table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from collections.abc import Mapping

from rag_ci.core import carry
from rag_ci.core.comparability import NotComparable, not_comparable_metrics, schema_problems, without_metrics
from rag_ci.core.config import GateConfig
from rag_ci.core.noise_review import review_noise
from rag_ci.core.results import Context, GroupAggregate, QuestionResult, RunResult
from rag_ci.core.verdict import RETRIEVAL_STAGE
from rag_ci.errors import BrokenRun, IncompatibleBaseline

# How to get a comparable baseline again, in words that hold wherever rag-ci runs; the
# GitHub Action says it its own way (rag_ci.action_modes.in_actions_words).
REBASELINE_HINT = "Re-baseline: make a fresh run on the base branch (`rag-ci run` on main) the new baseline."


@dataclass(frozen=True)
class MetricChange:
    name: str
    old: float | None
    new: float | None
    threshold: float | None
    old_passed: bool | None
    new_passed: bool | None
    reason: str | None = None  # the metric's own explanation of its new score

    @property
    def crossed_down(self) -> bool:
        return self.old_passed is True and self.new_passed is False

    @property
    def crossed_up(self) -> bool:
        return self.old_passed is False and self.new_passed is True


@dataclass(frozen=True)
class QuestionChange:
    """One question seen in both runs (or in one of them, for new/removed)."""

    id: str
    question: str
    corpora: tuple[str, ...]
    tags: tuple[str, ...]
    old_verdict: str | None
    new_verdict: str | None
    metrics: tuple[MetricChange, ...] = ()  # the metrics that crossed their threshold
    reason: str | None = None  # why it fails now (or failed before, for gains)
    failure_stage: str | None = None
    answer: str | None = None  # untrusted: escape when rendering
    old_latency_s: float | None = None
    new_latency_s: float | None = None
    unstable: bool = False
    # The baseline errored on this question; old_verdict is its last known good verdict,
    # carried forward from the run at this sha (None when that run had no sha).
    baseline_carried: bool = False
    carried_from_sha: str | None = None
    worse_because: str | None = None  # for `worse`: what got worse
    # Before and after, for the report (untrusted: escape when rendering). Sources are
    # labels (source, else doc_id) in the order retrieved: rank = position + 1.
    old_answer: str | None = None
    old_sources: tuple[str, ...] = ()
    new_sources: tuple[str, ...] = ()
    # Retrieval metrics that scored lower than on the baseline ("mrr 1.00 → 0.50"): the
    # evidence that points a failure at retrieval even when hit@k still passes.
    retrieval_evidence: tuple[str, ...] = ()
    question_hash: str | None = None  # this run's (an accepted-file entry names it)

    @property
    def latency_delta_s(self) -> float | None:
        if self.old_latency_s is None or self.new_latency_s is None:
            return None
        return self.new_latency_s - self.old_latency_s


@dataclass(frozen=True)
class Delta:
    old: float | None
    new: float | None

    @property
    def change(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old


@dataclass(frozen=True)
class Comparison:
    regressions: tuple[QuestionChange, ...]
    gains: tuple[QuestionChange, ...]
    changed: tuple[QuestionChange, ...]
    new: tuple[QuestionChange, ...]
    removed: tuple[QuestionChange, ...]
    unstable: tuple[str, ...]
    metric_means: dict[str, Delta]
    latency_p50_s: Delta
    latency_p95_s: Delta
    generator_cost_usd: Delta
    judge_cost_usd: Delta
    largest_latency_changes: tuple[QuestionChange, ...]
    per_corpus_pass_rate: dict[str, Delta]
    per_tag_pass_rate: dict[str, Delta]
    worse: tuple[QuestionChange, ...] = ()  # failed on the baseline, worse now: gates
    leaks: tuple[QuestionChange, ...] = ()  # routing leaks not already a regression or worse: gate
    # The baseline errored and nothing could be carried: listed, not gating (but a leak still is).
    no_baseline_verdict: tuple[QuestionChange, ...] = ()
    carried: tuple[QuestionChange, ...] = ()  # compared with a carried baseline verdict
    fail_on: str = "any_regression"
    base_sha: str | None = None
    head_sha: str | None = None
    notes: tuple[str, ...] = field(default=())
    # Noise control (rag_ci/core/noise_review.py, DESIGN §7.3-7.4).
    flaky: tuple[Any, ...] = ()  # FlakyQuestion: flips the evidence does not support, not gating
    significance: tuple[Any, ...] = ()  # SignificanceRow: paired tests of every pass-rate change
    budgets: tuple[Any, ...] = ()  # BudgetCheck
    alpha: float = 0.05
    target_calls: int = 0  # calls to the RAG this run, re-asks included

    @property
    def budget_breaches(self) -> tuple[Any, ...]:
        return tuple(b for b in self.budgets if b.breached)

    @property
    def significant_drop(self) -> bool:
        """The overall pass rate fell, and McNemar says it is not noise."""
        return any(row.scope == "overall" and row.test.significant_drop for row in self.significance)
    # Metrics whose definition differs between the runs: left out of both sides' verdicts.
    not_comparable: tuple[NotComparable, ...] = ()
    # What the PR's own rag-ci.yml would change in the baseline's gate policy (preview only).
    policy_changes: tuple[str, ...] = ()
    # Accepted regressions (rag_ci.core.accepted): out of `regressions`/`worse`, listed with
    # their reason; entries of the accepted file that matched nothing, or lapsed.
    accepted: tuple[Any, ...] = ()  # AcceptedChange
    stale_accepted: tuple[Any, ...] = ()  # StaleAcceptance
    # Questions each metric scored, (baseline, this run), against the questions of each run:
    # a mean over fewer questions is shown with its count, never silently.
    metric_scored: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    questions_n: tuple[int, int] = (0, 0)

    @property
    def gating(self) -> tuple[QuestionChange, ...]:
        """The questions that fail the gate: regressions, worse, and every routing leak."""
        return self.regressions + self.worse + self.leaks

    @property
    def leaking(self) -> tuple[QuestionChange, ...]:
        """Every question that leaks now, whichever list it is in."""
        return tuple(c for c in self.gating if c.new_verdict == "routing_error")

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
            "cost": {"generator_usd": delta(self.generator_cost_usd), "judge_usd": delta(self.judge_cost_usd)},
            "largest_latency_changes": changes(self.largest_latency_changes),
            "per_corpus_pass_rate": {k: delta(v) for k, v in self.per_corpus_pass_rate.items()},
            "per_tag_pass_rate": {k: delta(v) for k, v in self.per_tag_pass_rate.items()},
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "notes": list(self.notes),
            "flaky": [{**asdict(f), "pass_rate": f.pass_rate} for f in self.flaky],
            "significance": [
                {"scope": r.scope, "name": r.name, **asdict(r.test), "delta": r.test.delta, "significant": r.test.significant}
                for r in self.significance
            ],
            "budgets": [{**asdict(b), "breached": b.breached} for b in self.budgets],
            "target_calls": self.target_calls,
            "not_comparable": [asdict(n) for n in self.not_comparable],
            "policy_changes": list(self.policy_changes),
            "accepted": [{**asdict(a.change), "reasons": list(a.reasons), "metrics": list(a.metrics)} for a in self.accepted],
            "stale_accepted": [asdict(s) for s in self.stale_accepted],
            "metric_scored": {k: list(v) for k, v in self.metric_scored.items()},
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
            "The baseline cannot be compared with this run:\n  - " + "\n  - ".join(problems) + "\n" + REBASELINE_HINT
        )


def check_usable(base: RunResult, head: RunResult) -> None:
    """A broken run (error share above gate.max_error_rate) is not a result: refuse it."""
    if base.meta.broken:
        raise BrokenRun(
            f"The baseline (commit {base.meta.git_sha or 'unknown'}) is a broken run, not a result: "
            f"{base.meta.broken}\n{REBASELINE_HINT}"
        )
    if head.meta.broken:
        raise BrokenRun(f"This run is broken, not a result: {head.meta.broken}")


def usable_baseline(old: QuestionResult, left_out: set[str]) -> QuestionResult:
    """The baseline record to judge against: its last known good verdict when it errored
    (without the metrics left out as not comparable)."""
    if old.verdict != "error" or old.carried is None or old.carried.question_hash != old.question_hash:
        return old
    carried = carry.without_metrics(old.carried, left_out)
    return old.model_copy(update={"verdict": carried.verdict, "metrics": carried.metrics, "leaks": carried.leaks, "error": None})


def _worse(old: QuestionResult, new: QuestionResult, change: QuestionChange) -> str | None:
    """What got worse on a question that already failed on the baseline; None if nothing."""
    if old.passed or new.passed:
        return None
    if new.verdict == "routing_error" and old.verdict != "routing_error":
        return "now leaks: contexts from " + ", ".join(new.leaks)
    if new.verdict == "error":
        return "now errors: " + (_why(new) or "error")
    lost = [f"{m.name} {_num(m.old)} → {_num(m.new)}" for m in change.metrics if m.crossed_down]
    return "lost " + ", ".join(lost) + " (passed on the baseline)" if lost else None


def reasons_shown(old: QuestionResult | None, new: QuestionResult) -> frozenset[str]:
    """The metrics of `new` whose own explanation a comparison with `old` prints.

    The comparison prints metric reasons (`_why`, `MetricChange.reason`) for the failing
    metrics of a regression, of a worse question and of a question whose baseline verdict
    is unusable; a gain, a question failing as before, a new or an edited question show
    verdicts only, and a run without baseline shows metric names and scores. The judge
    asks a failing verdict's reason (one more call) only for these (rag_ci.judges.scorer).
    """
    if old is None or old.question_hash != new.question_hash or new.passed:
        return frozenset()
    failing = frozenset(name for name, m in new.metrics.items() if m.passed is False and m.error is None)
    old = usable_baseline(old, set())
    if old.verdict == "error" or old.passed:
        return failing  # no usable baseline verdict, or a regression
    return failing if _worse(old, new, _change(old, new)) else frozenset()


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _why(record: QuestionResult) -> str | None:
    if record.error:
        return record.error
    if record.leaks:
        return "routing leak: contexts from " + ", ".join(record.leaks)
    failing = [m for m in record.metrics.values() if m.passed is False or m.error]
    return "; ".join(f"{m.name}: {m.error or m.reason or 'failed'}" for m in failing) or None


def _change(old: QuestionResult | None, new: QuestionResult | None) -> QuestionChange:
    subject = new or old
    assert subject is not None
    crossings: list[MetricChange] = []
    if old is not None and new is not None:
        for name in sorted(set(old.metrics) | set(new.metrics)):
            o, n = old.metrics.get(name), new.metrics.get(name)
            change = MetricChange(
                name=name,
                old=o.score if o else None,
                new=n.score if n else None,
                threshold=(n or o).threshold,  # type: ignore[union-attr]
                old_passed=o.passed if o else None,
                new_passed=n.passed if n else None,
                reason=(n.error or n.reason) if n else None,
            )
            if change.crossed_down or change.crossed_up:
                crossings.append(change)
    reason_source = new if new is not None and not new.passed else old
    evidence = _retrieval_evidence(old, new) if old is not None and new is not None else ()
    return QuestionChange(
        id=subject.id,
        question=subject.question,
        corpora=tuple(subject.corpora),
        tags=tuple(subject.tags),
        old_verdict=old.verdict if old else None,
        new_verdict=new.verdict if new else None,
        metrics=tuple(crossings),
        reason=_why(reason_source) if reason_source is not None else None,
        failure_stage=_stage(new, evidence) if new is not None else None,
        answer=new.answer if new is not None else None,
        old_answer=old.answer if old is not None else None,
        old_sources=_sources(old.contexts) if old is not None else (),
        new_sources=_sources(new.contexts) if new is not None else (),
        retrieval_evidence=evidence,
        question_hash=subject.question_hash,
        old_latency_s=old.latency_s if old else None,
        new_latency_s=new.latency_s if new else None,
        unstable=new.unstable if new is not None else False,
    )


_TOP_K = 5  # the default k of the retrieval metrics


def _sources(contexts: list[Context]) -> tuple[str, ...]:
    # The source (file, section) says which chunk; doc_id is often only the corpus.
    return tuple(c.source or c.doc_id or " ".join(c.text.split())[:80] for c in contexts)


def _retrieval_evidence(old: QuestionResult, new: QuestionResult) -> tuple[str, ...]:
    """Every retrieval metric (hit@k, MRR, nDCG, source recall/precision, contextual recall
    and precision) that scored lower than on the baseline, passing or not."""
    out = []
    for name in sorted(RETRIEVAL_STAGE & set(old.metrics) & set(new.metrics)):
        o, n = old.metrics[name].score, new.metrics[name].score
        if o is not None and n is not None and n < o - 1e-9:
            out.append(f"{name} {_num(o)} → {_num(n)}")
    # Chunks in the top k that the baseline did not retrieve (re-chunking, another retriever):
    # the context is no longer the one the baseline answered from, whatever the metrics say.
    before, after = _sources(old.contexts)[:_TOP_K], _sources(new.contexts)[:_TOP_K]
    unseen = [label for label in after if label not in before]
    if before and unseen:
        out.append(f"{len(unseen)} of the top {len(after)} chunks not retrieved on the baseline")
    return tuple(out)


def _stage(new: QuestionResult, evidence: tuple[str, ...]) -> str | None:
    """The stage to fix. A failure the run itself files under generation (the retrieval
    checks pass) points at retrieval when retrieval got worse than on the baseline: the
    expected source ranked lower (MRR, nDCG) or fewer of them made the top k."""
    if new.failure_stage == "generation" and evidence:
        return "retrieval"
    if new.failure_stage is None and evidence and not new.passed and new.verdict == "fail":
        return "retrieval"
    return new.failure_stage


def _rates(groups: dict[str, GroupAggregate]) -> dict[str, float]:
    return {k: g.pass_rate for k, g in groups.items()}


def _rate_deltas(old: dict[str, GroupAggregate], new: dict[str, GroupAggregate]) -> dict[str, Delta]:
    o, n = _rates(old), _rates(new)
    return {k: Delta(o.get(k), n.get(k)) for k in sorted(set(o) | set(n))}


def compare(base: RunResult, head: RunResult, *, fail_on: str = "any_regression", top_latency: int = 5,
            gate: GateConfig | None = None, known_flaky: Mapping[str, float] | None = None) -> Comparison:
    """Compare two runs question by question.

    Raises BrokenRun when either run is broken, IncompatibleBaseline when they can't be
    compared. `gate` (alpha, budgets) and `known_flaky` (question id -> pass rate on main,
    from the history) feed the noise review: flaky questions, significance, budgets.
    """
    check_usable(base, head)
    check_compatible(base, head)
    not_comparable = not_comparable_metrics(base.meta, head.meta)
    if not_comparable:  # left out of both sides, for the classification and the noise review alike
        left_out = {n.name for n in not_comparable}
        base, head = without_metrics(base, left_out), without_metrics(head, left_out)
    comparison = _compare(base, head, fail_on=fail_on, top_latency=top_latency, not_comparable=not_comparable)
    gate = gate or GateConfig()
    return review_noise(comparison, base, head, alpha=gate.alpha, budgets=gate.budgets.model_dump(),
                        known_flaky=known_flaky)


def _compare(base: RunResult, head: RunResult, *, fail_on: str, top_latency: int,
             not_comparable: tuple[NotComparable, ...]) -> Comparison:
    old_by_id, new_by_id = base.by_id(), head.by_id()
    left_out = {n.name for n in not_comparable}
    regressions, gains, changed, worse, leaks, unjudged, carried, both = [], [], [], [], [], [], [], []
    for qid, new in new_by_id.items():
        recorded = old_by_id.get(qid)
        if recorded is None:
            continue
        old = usable_baseline(recorded, left_out)
        change = _change(old, new)
        if old is not recorded and old.question_hash == new.question_hash:
            change = replace(change, baseline_carried=True, carried_from_sha=recorded.carried.from_sha if recorded.carried else None)
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
        elif why := _worse(old, new, change):
            worse.append(replace(change, worse_because=why))
            continue
        if new.verdict == "routing_error":
            leaks.append(change)  # still leaking, or on a changed question: a leak always gates
    new_only = [_change(None, r) for qid, r in new_by_id.items() if qid not in old_by_id]
    leaks.extend(c for c in new_only if c.new_verdict == "routing_error")
    removed = [_change(r, None) for qid, r in old_by_id.items() if qid not in new_by_id]
    with_latency = [c for c in both if c.latency_delta_s is not None]
    largest = sorted(with_latency, key=lambda c: abs(c.latency_delta_s or 0.0), reverse=True)[:top_latency]
    ba, ha = base.aggregates, head.aggregates
    return Comparison(
        regressions=tuple(regressions),
        gains=tuple(gains),
        changed=tuple(changed),
        new=tuple(new_only),
        removed=tuple(removed),
        unstable=tuple(q.id for q in head.questions if q.unstable),
        metric_means={
            name: Delta(ba.per_metric[name].mean if name in ba.per_metric else None, ha.per_metric[name].mean if name in ha.per_metric else None)
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
            name: (_scored(base, name) if name in ba.per_metric else None, _scored(head, name) if name in ha.per_metric else None)
            for name in sorted(set(ba.per_metric) | set(ha.per_metric))
        },
        questions_n=(ba.overall.n, ha.overall.n),
    )


def _scored(result: RunResult, name: str) -> int:
    return sum(1 for q in result.questions if name in q.metrics and q.metrics[name].score is not None)
