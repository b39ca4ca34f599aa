"""One question seen on both sides of a comparison: what crossed its threshold, why it
fails, what got worse, the stage to fix and the retrieval evidence (DESIGN §6). Pure.

rag_ci.core.comparison.compare sorts these changes into regressions, worse, gains and the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_ci.core.comparison import carry
from rag_ci.core.scoring.results import Context, QuestionResult
from rag_ci.core.scoring.verdict import RETRIEVAL_STAGE


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
    # Cited sources whose document changed between baseline and this run (content fingerprints):
    # the reference may be stale; the question still gates.
    source_changed: tuple[str, ...] = ()

    @property
    def latency_delta_s(self) -> float | None:
        if self.old_latency_s is None or self.new_latency_s is None:
            return None
        return self.new_latency_s - self.old_latency_s


def usable_baseline(old: QuestionResult, left_out: set[str]) -> QuestionResult:
    """The baseline record to judge against: its last known good verdict when it errored
    (without the metrics left out as not comparable)."""
    if old.verdict != "error" or old.carried is None or old.carried.question_hash != old.question_hash:
        return old
    carried = carry.without_metrics(old.carried, left_out)
    return old.model_copy(update={"verdict": carried.verdict, "metrics": carried.metrics, "leaks": carried.leaks, "error": None})


def what_got_worse(old: QuestionResult, new: QuestionResult, change: QuestionChange) -> str | None:
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
    return failing if what_got_worse(old, new, question_change(old, new)) else frozenset()


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _why(record: QuestionResult) -> str | None:
    if record.error:
        return record.error
    if record.leaks:
        return "routing leak: contexts from " + ", ".join(record.leaks)
    failing = [m for m in record.metrics.values() if m.passed is False or m.error]
    return "; ".join(f"{m.name}: {m.error or m.reason or 'failed'}" for m in failing) or None


def question_change(old: QuestionResult | None, new: QuestionResult | None) -> QuestionChange:
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
        source_changed=_changed_sources(old, new) if old is not None and new is not None else (),
    )


def _changed_sources(old: QuestionResult, new: QuestionResult) -> tuple[str, ...]:
    """The sources both runs fingerprinted whose document differs (edited, removed, added)."""
    before = old.source_fingerprints
    return tuple(s for s, fingerprint in new.source_fingerprints.items() if s in before and before[s] != fingerprint)


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
