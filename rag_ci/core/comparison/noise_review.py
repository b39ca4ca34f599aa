"""The noise part of a comparison: flaky questions, significance of every pass-rate change, budgets.

`review_noise` takes the question-by-question regressions and the two runs and returns what
docs/noise.md asks for, as a `NoiseReview` that rag_ci.core.comparison.compare folds into
the Comparison, so the per-question semantics of compare.py stay as they are:
- flaky: re-asked flips that a sample cleared, and regressions of known-flaky questions
  whose failures are not significant (those leave `regressions`);
- significance: exact McNemar and a seeded paired bootstrap CI of the pass-rate delta,
  overall, per metric, per corpus and per tag, on the first sample of each question;
- budgets: latency and cost limits, relative to the baseline or absolute, and the latency
  percentiles that rose beyond noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_ci.core.comparison.budgets import BudgetCheck, check_budgets, latency_rise_bounds
from rag_ci.core.comparison.noise import FlakyQuestion, review_flips
from rag_ci.core.comparison.stats import PairedTest, paired_test
from rag_ci.core.results import QuestionResult, RunResult


@dataclass(frozen=True)
class SignificanceRow:
    scope: str  # "overall" | "metric" | "corpus" | "tag"
    name: str
    test: PairedTest

    @property
    def label(self) -> str:
        return "pass rate" if self.scope == "overall" else f"{self.scope} {self.name} pass rate"


def significance(base: RunResult, head: RunResult, alpha: float) -> tuple[SignificanceRow, ...]:
    """Paired tests on the questions both runs asked unchanged (same content hash).

    Each question contributes its first sample on both sides: one independent draw per
    question per run, the paired design McNemar assumes (re-asks follow only failed first
    samples, counting them would bias the head towards passing).
    """
    old_by_id = base.by_id()
    pairs = [
        (old_by_id[q.id], q)
        for q in head.questions
        if q.id in old_by_id and old_by_id[q.id].question_hash == q.question_hash
    ]
    if not pairs:
        return ()
    passed = [(old.first_sample_passed, new.first_sample_passed) for old, new in pairs]
    per_metric = _metric_outcomes(pairs)
    rows = [
        SignificanceRow(
            "overall", "", paired_test([o for o, _ in passed], [n for _, n in passed], alpha=alpha)
        )
    ]
    for name in sorted(per_metric):
        rows.append(SignificanceRow("metric", name, paired_test(*per_metric[name], alpha=alpha)))
    scopes: tuple[tuple[str, Callable[[QuestionResult], Sequence[str]]], ...] = (
        ("corpus", lambda r: r.corpora),
        ("tag", lambda r: r.tags),
    )
    for scope, keys in scopes:
        members: dict[str, list[int]] = {}
        for i, (_, new) in enumerate(pairs):
            for key in set(keys(new)):
                members.setdefault(key, []).append(i)
        for name in sorted(members):
            group = members[name]
            test = paired_test([passed[i][0] for i in group], [passed[i][1] for i in group], alpha=alpha)
            rows.append(SignificanceRow(scope, name, test))
    return tuple(rows)


def _metric_outcomes(
    pairs: list[tuple[QuestionResult, QuestionResult]],
) -> dict[str, tuple[list[bool], list[bool]]]:
    """Per metric, the pairs of first-sample outcomes where both runs have one, in one pass over the
    questions (not a lookup of every metric name in every question: 50,000 questions 1.5 s → 0.4 s)."""
    both: dict[str, tuple[list[bool], list[bool]]] = {}
    for old, new in pairs:
        before = old.first_sample_outcomes()
        for name, now in new.first_sample_outcomes().items():
            if now is not None and (was := before.get(name)) is not None:
                olds, news = both.setdefault(name, ([], []))
                olds.append(was)
                news.append(now)
    return both


@dataclass(frozen=True)
class NoiseReview:
    cleared: frozenset[str]  # regressions the evidence does not support: out of `regressions`, into `flaky`
    flaky: tuple[FlakyQuestion, ...]
    significance: tuple[SignificanceRow, ...]
    budgets: tuple[BudgetCheck, ...]
    # Latency percentiles that rose: the value this run is above with confidence (budgets.latency_rise_bounds).
    latency_rise_bounds: dict[str, float | None]
    alpha: float
    target_calls: int  # calls to the RAG this run, re-asks included


def review_noise(
    regressions: Iterable[str],
    base: RunResult,
    head: RunResult,
    *,
    alpha: float = 0.05,
    budgets: Mapping[str, Any] | None = None,
    known_flaky: Mapping[str, float] | None = None,
) -> NoiseReview:
    """The noise review of a comparison whose regressions are the questions `regressions` names."""
    rows = significance(base, head, alpha)
    flaky, cleared = review_flips(
        base.by_id(), head.questions, list(regressions), known_flaky=known_flaky or {}, alpha=alpha
    )
    return NoiseReview(
        cleared=frozenset(cleared),
        flaky=tuple(flaky),
        significance=rows,
        budgets=check_budgets(budgets or {}, base, head, alpha=alpha),
        latency_rise_bounds=latency_rise_bounds(base, head, alpha),
        alpha=alpha,
        target_calls=sum(q.target_calls for q in head.questions),
    )
