"""A comparison with the baseline, as the report reads it (docs/gate.md): the questions sorted
into regressions, worse, gains and the rest, the deltas of the whole run, the noise review and
the verdict they make. rag_ci.core.comparison.compare makes it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from rag_ci.core.comparison.acceptance import AcceptedChange, StaleAcceptance
from rag_ci.core.comparison.budgets import BudgetCheck
from rag_ci.core.comparison.comparability import NotComparable
from rag_ci.core.comparison.judge_cost import JudgeCost
from rag_ci.core.comparison.judge_noise import JudgeNoise
from rag_ci.core.comparison.noise import FlakyQuestion
from rag_ci.core.comparison.noise_review import SignificanceRow
from rag_ci.core.comparison.question_change import QuestionChange


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
    # A conversation's failing turn whose history changed -> the earlier failing turn it follows
    # from (rag_ci.core.comparison.conversation_turns): still gating, folded under that turn.
    following: dict[str, str] = field(default_factory=dict)

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
            "following": dict(self.following),
        }
