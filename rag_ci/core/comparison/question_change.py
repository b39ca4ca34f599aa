"""One question seen on both sides of a comparison: what crossed its threshold, why it
fails, what got worse, the stage to fix and the retrieval evidence (docs/gate.md). Pure.

rag_ci.core.comparison.compare sorts these changes into regressions, worse, gains and the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_ci.core.base.text import normalise_text
from rag_ci.core.comparison import carry
from rag_ci.core.comparison.judge_noise import confirmation_words
from rag_ci.core.comparison.retrieval_diff import RetrievalDiff, diff_contexts, label
from rag_ci.core.results import QuestionResult, RunResult, Sample
from rag_ci.core.scoring.verdict import RETRIEVAL_STAGE


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)  # slots: one per question, 50,000 in a large comparison
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
    # The stage to fix, decided from what retrieval returned (rag_ci.core.comparison.retrieval_diff):
    # "source" when a cited document changed in this PR (the reference may be stale: whatever
    # retrieval and generation did, the fix is the reference or the document), "retrieval" when a
    # retrieval metric failed or retrieval is not what it was, else the run's own.
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
    # Per source of this run: "same", "new", "changed" (same id, other text) or "leaked".
    new_source_kinds: tuple[str, ...] = ()
    # Why retrieval is not what it was: metrics that scored lower ("mrr 1.00 → 0.50"), chunks
    # cut, lost or new. The evidence that points a failure at retrieval even when hit@k passes.
    retrieval_evidence: tuple[str, ...] = ()
    question_hash: str | None = None  # this run's (an accepted-file entry names it)
    # Cited sources whose document changed between baseline and this run (content fingerprints):
    # the reference may be stale; the question still gates.
    source_changed: tuple[str, ...] = ()
    # Cited sources that name no document of their (known) corpus in this run: a typo, or a
    # document the PR removed or never added.
    missing_sources: tuple[str, ...] = ()
    # A routing leak: the corpora outside the question's routing, and how many contexts came from them.
    leaks: tuple[str, ...] = ()
    leaked_contexts: int = 0
    # Every answer this run took (re-asks of a flip included) and how many passed.
    answers: int = 1
    answers_passed: int = 0
    # Of those, the byte-identical ones counted once, and the judge's votes on the answer shown
    # (its confirmation runs): one answer judged 3× is one answer, not three (docs/noise.md).
    distinct_answers: int = 1
    distinct_passed: int = 0
    judge_votes: tuple[bool, ...] = ()
    # How the judge established this question's flip on both sides ("correctness judged 3× fail on
    # this PR, the baseline's answer 3× pass"): a confirmed row, not noise (docs/noise.md).
    judge_confirmation: str | None = None
    reasked: bool = False
    # A gain whose baseline failure was a single answer nobody re-asked: possibly noise.
    possibly_noise: bool = False
    # The baseline's answers to this question (its samples, re-asks included) and how many passed.
    old_answers: int = 1
    old_answers_passed: int = 0
    renamed_from: str | None = None  # its id on the baseline, when the PR renamed it (same question hash)
    # Short labels shown under the question in the report (e.g. "source changed in this PR").
    notes: tuple[str, ...] = ()
    # Chunks of this run whose text the baseline retrieved too, and of them those under another id.
    same_text_contexts: int = 0
    same_text_other_id: int = 0
    # A conversation's turn: the messages it was asked after, "user: …" / "assistant: …" (untrusted:
    # escape when rendering; rag_ci.core.comparison.conversation_turns).
    history: tuple[str, ...] = ()
    trace_url: str | None = None  # this run's trace of the question (report.trace_url), linked from its row

    @property
    def latency_delta_s(self) -> float | None:
        if self.old_latency_s is None or self.new_latency_s is None:
            return None
        return self.new_latency_s - self.old_latency_s

    @property
    def failing_metrics(self) -> tuple[MetricChange, ...]:
        return tuple(m for m in self.metrics if m.crossed_down)


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
    old = carry.usable_baseline(old, set())
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
            was, now = o.passed if o else None, n.passed if n else None
            if not (was is True and now is False) and not (was is False and now is True):
                continue  # no crossing (MetricChange.crossed_down / crossed_up): most metrics of most questions
            change = MetricChange(
                name=name,
                old=o.score if o else None,
                new=n.score if n else None,
                threshold=(n or o).threshold,  # type: ignore[union-attr]
                old_passed=o.passed if o else None,
                new_passed=n.passed if n else None,
                reason=(n.error or n.reason) if n else None,
            )
            crossings.append(change)
    reason_source = new if new is not None and not new.passed else old
    retrieval = _retrieval(old, new) if old is not None and new is not None else None
    evidence = retrieval.evidence if retrieval is not None else ()
    samples = new.samples if new is not None else []
    changed_sources = _changed_sources(old, new) if old is not None and new is not None else ()
    return QuestionChange(
        id=subject.id,
        question=subject.question,
        corpora=tuple(subject.corpora),
        tags=tuple(subject.tags),
        old_verdict=old.verdict if old else None,
        new_verdict=new.verdict if new else None,
        metrics=tuple(crossings),
        reason=_why(reason_source) if reason_source is not None else None,
        failure_stage=_stage(new, evidence, changed_sources, _worse_by(old, crossings))
        if new is not None
        else None,
        answer=new.answer if new is not None else None,
        old_answer=old.answer if old is not None else None,
        old_sources=tuple(label(c) for c in old.contexts) if old is not None else (),
        new_sources=tuple(label(c) for c in new.contexts) if new is not None else (),
        new_source_kinds=retrieval.kinds if retrieval is not None else (),
        retrieval_evidence=evidence,
        question_hash=subject.question_hash,
        old_latency_s=old.latency_s if old else None,
        new_latency_s=new.latency_s if new else None,
        unstable=new.unstable if new is not None else False,
        judge_confirmation=confirmation_words(new),
        source_changed=changed_sources,
        missing_sources=tuple(s for s, f in new.source_fingerprints.items() if f is None)
        if new is not None
        else (),
        leaks=tuple(new.leaks) if new is not None else (),
        leaked_contexts=sum(1 for c in new.contexts if c.doc_id in new.leaks) if new is not None else 0,
        answers=max(1, len(samples)),
        answers_passed=sum(1 for x in samples if x.verdict == "pass")
        if samples
        else int(bool(new and new.passed)),
        reasked=bool(new and new.reasked),
        **_distinct(samples, new),
        possibly_noise=old is not None
        and new is not None
        and not old.passed
        and new.passed
        and not _failure_confirmed(old),
        old_answers=max(1, len(old.samples)) if old is not None else 1,
        old_answers_passed=(
            sum(1 for x in old.samples if x.verdict == "pass") if old.samples else int(old.passed)
        )
        if old is not None
        else 0,
        same_text_contexts=retrieval.same_text if retrieval is not None else 0,
        same_text_other_id=retrieval.same_text_other_id if retrieval is not None else 0,
        trace_url=new.trace_url if new is not None else None,
    )


def _distinct(samples: list[Sample], new: QuestionResult | None) -> dict[str, Any]:
    """Byte-identical answers (same hash) count once: the first sample of each answer stands for it."""
    votes = next((tuple(m.confirm_runs) for m in (new.metrics.values() if new else ()) if m.confirm_runs), ())
    if not samples:
        return {"distinct_answers": 1, "distinct_passed": int(bool(new and new.passed)), "judge_votes": votes}
    first: dict[str, Sample] = {}
    for i, sample in enumerate(samples):
        first.setdefault(sample.answer_hash or f"#{i}", sample)
    return {
        "distinct_answers": len(first),
        "distinct_passed": sum(1 for x in first.values() if x.verdict == "pass"),
        "judge_votes": votes,
    }


def failing_with_changed_sources(
    base: RunResult, head: RunResult, exclude: set[str]
) -> tuple[QuestionChange, ...]:
    """Questions that failed on the baseline and fail now, unedited, whose cited document changed
    in this PR: not gating (nothing got worse), but the change may be the fix, or the reference
    stale. `exclude`: the ids the comparison shows already (the gating rows)."""
    candidates = [q for q in head.questions if not q.passed and q.source_fingerprints and q.id not in exclude]
    if not candidates:  # most runs: no failing question cites a fingerprinted document
        return ()
    old_by_id = base.by_id()
    found = []
    for new in candidates:
        old = old_by_id.get(new.id)
        if (
            old is not None
            and not old.passed
            and old.question_hash == new.question_hash
            and _changed_sources(old, new)
        ):
            found.append(question_change(old, new))
    return tuple(found)


def _failure_confirmed(old: QuestionResult) -> bool:
    """The baseline's failure was seen on several answers, all failing: a gain against it is not
    noise. Re-asks count too: they follow a failure, so they bias a pass rate, but a failure
    every re-ask reproduced is confirmed all the more (issue 33: a gain against a re-asked
    baseline was called "one answer, never re-asked")."""
    return len(old.samples) > 1 and all(s.verdict != "pass" for s in old.samples)


def _changed_sources(old: QuestionResult, new: QuestionResult) -> tuple[str, ...]:
    """The sources both runs fingerprinted whose document differs (edited, removed, added)."""
    before = old.source_fingerprints
    return tuple(
        s for s, fingerprint in new.source_fingerprints.items() if s in before and before[s] != fingerprint
    )


def _retrieval(old: QuestionResult, new: QuestionResult) -> RetrievalDiff:
    """Every retrieval metric (hit@k, MRR, nDCG, source recall/precision, contextual recall
    and precision) that scored lower than on the baseline, passing or not, then what the
    chunks themselves say (rag_ci.core.comparison.retrieval_diff)."""
    dropped = []
    for name in sorted(RETRIEVAL_STAGE & set(old.metrics) & set(new.metrics)):
        o, n = old.metrics[name].score, new.metrics[name].score
        if o is not None and n is not None and n < o - 1e-9:
            dropped.append(f"{name} {_num(o)} → {_num(n)}")
    answer = normalise_text(new.answer or "") if new.keywords else ""
    missing = [k for k in new.keywords if normalise_text(k) not in answer]
    chunks = diff_contexts(old.contexts, new.contexts, keywords_missing=missing, leaked_corpora=new.leaks)
    # The chunk that lost a keyword first: it names what the answer is missing and why.
    lost = tuple(e for e in chunks.evidence if e.startswith("the chunk that held"))
    rest = tuple(e for e in chunks.evidence if e not in lost)
    return RetrievalDiff(
        lost + tuple(dropped) + rest, chunks.kinds, chunks.same_text, chunks.same_text_other_id
    )


def _worse_by(old: QuestionResult | None, crossings: list[MetricChange]) -> tuple[str, ...]:
    """The metrics a question that already failed on the baseline lost since: what got worse."""
    if old is None or old.passed:
        return ()
    return tuple(m.name for m in crossings if m.crossed_down)


def _stage(
    new: QuestionResult,
    evidence: tuple[str, ...],
    changed_sources: tuple[str, ...] = (),
    worse_by: tuple[str, ...] = (),
) -> str | None:
    """The stage to fix, from what retrieval returned. A cited document that changed decides
    first: its chunks have other text and the answer other facts, so the retrieval evidence
    ("the chunk that held … was cut") would point at the wrong fix. A failed retrieval metric files the
    question under retrieval (also when the answer failed too: it could not be right without
    the context); so does a failure the run files under generation (the retrieval checks pass)
    when retrieval is not what it was on the baseline: a chunk cut or lost, the expected source
    ranked lower, other chunks in the top k."""
    if new.verdict != "fail":
        return new.failure_stage
    if changed_sources:
        return "source"
    if worse_by:  # already failing: filed by what it lost now, not by the failures it had on the baseline
        return "retrieval" if RETRIEVAL_STAGE & set(worse_by) else "generation"
    if new.failure_stage in ("retrieval", "both") or evidence:
        return "retrieval"
    return new.failure_stage
