"""Generator noise (docs/noise.md): when a flipped question is a regression, and when it is flaky.

Pure rules, written so their false-alarm rates can be computed (docs/noise.md):

* **Re-ask rule.** A question that passed on the baseline and does not pass on its first
  sample is asked again, one sample at a time, up to `confirm_target_runs` times. The first
  passing sample clears it: it is *flaky* (pass rate k/n, not gating). It is a regression
  only when every sample fails. For a question that did not change and fails a sample
  with probability q, the false-alarm rate per flipped question is q**runs, per question
  q**(runs + 1); a question that now always fails is caught with probability 1.
* **Known-flaky rule.** A question known to flip on main (history) or whose sampled
  baseline pass rate p0 is below 1 also needs the failures to be significant: one-sided
  binomial test, P(X >= failures | n, 1 − p0) <= alpha. Its false-alarm rate is <= alpha
  per flipped question by construction.
* **Baseline sampling.** With `baseline.samples` = s > 1, the baseline's verdict is the
  majority of s samples (a tie passes) and its pass rate k/s is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rag_ci.core.comparison.stats import binom_sf
from rag_ci.core.results import QuestionResult

Decision = Literal["ask_again", "regression", "flaky"]


def should_reask(first: QuestionResult, baseline: QuestionResult | None, runs: int) -> bool:
    """Re-ask a pass→fail (or →error) flip on an unchanged question.

    Not re-asked: a routing leak (a leak always gates: one leaked context is already the
    finding), changed questions (reported as changed, never as regressions) and gains (a
    gain does not fail the check; a single-sample baseline's noise is handled by sampling
    the baseline, see docs/noise.md).
    """
    return (
        runs > 0
        and baseline is not None
        and baseline.question_hash == first.question_hash
        and _passed_on_baseline(baseline)
        and first.verdict in ("fail", "error")
        and not _only_unestablished_judge_flips(first, baseline)
    )


def _only_unestablished_judge_flips(first: QuestionResult, baseline: QuestionResult) -> bool:
    """Every metric that failed now and passed on the baseline is a judged flip confirmation did
    not establish (the baseline's pass was noise, or the judge is split: docs/noise.md, "Judge
    noise"): compare gates none of them, and another answer from the RAG would not change that."""
    if first.verdict != "fail":
        return False
    flipped = [
        m
        for name, m in first.metrics.items()
        if m.passed is False and (old := baseline.metrics.get(name)) is not None and old.passed
    ]
    return bool(flipped) and all(m.judge_split or m.baseline_confirmed is False for m in flipped)


def _passed_on_baseline(baseline: QuestionResult) -> bool:
    """Its own verdict, or, when main errored on it, the last known good verdict it carries:
    compare gates such a question as a regression, so it deserves the same re-asks."""
    if baseline.verdict == "error" and baseline.carried is not None:
        return baseline.carried.verdict == "pass"
    return baseline.passed


def reask_decision(outcomes: Sequence[bool], runs: int) -> Decision:
    """After each sample (True = passed; outcomes[0] is the failed first sample)."""
    if any(outcomes):
        return "flaky"
    if len(outcomes) >= runs + 1:
        return "regression"
    return "ask_again"


def majority_passes(outcomes: Sequence[bool]) -> bool:
    """The baseline's verdict from its samples: at least half pass (use an odd count)."""
    return 2 * sum(outcomes) >= len(outcomes)


def known_flaky_p_value(failures: int, samples: int, baseline_pass_rate: float) -> float:
    """One-sided binomial p-value of `failures` in `samples` when the question still
    fails with its baseline rate 1 − p0."""
    return binom_sf(failures, samples, 1.0 - baseline_pass_rate)


@dataclass(frozen=True)
class FlakyQuestion:
    """A flip the evidence does not support: listed, never gating."""

    id: str
    passed: int  # samples that passed now
    samples: int  # samples taken now
    baseline_pass_rate: float | None  # known from baseline samples or history; None = single sample
    why: str
    from_history: bool = False  # cleared by the history's known-flaky mark (not by samples of this run)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.samples if self.samples else 0.0


def baseline_pass_rate(record: QuestionResult | None, known_flaky: Mapping[str, float]) -> float | None:
    """What is known of a question's pass rate on main: the history's pooled estimate for a
    known-flaky question, else the baseline's own samples (`baseline.samples`; re-asked
    samples are not used: they follow a failure by construction)."""
    if record is None:
        return None
    if record.id in known_flaky:
        return known_flaky[record.id]
    if record.pass_rate is not None and not record.reasked and len(record.samples) > 1:
        return record.pass_rate
    return None


def review_flips(
    base: Mapping[str, QuestionResult],
    head: Iterable[QuestionResult],
    regression_ids: Iterable[str],
    *,
    known_flaky: Mapping[str, float],
    alpha: float,
) -> tuple[list[FlakyQuestion], set[str]]:
    """Flaky questions, and the regressions they clear.

    Flaky: re-asked flips that a sample cleared (the record keeps its failed first sample),
    and regressions of known-flaky questions whose failures are not significant at `alpha`.
    """
    by_id = {q.id: q for q in head}
    flaky: list[FlakyQuestion] = []
    cleared: set[str] = set()
    for qid in regression_ids:
        record, old = by_id.get(qid), base.get(qid)
        if record is None or record.verdict == "routing_error":
            continue
        samples = record.samples or []
        n = len(samples) or 1
        failures = sum(1 for s in samples if s.verdict != "pass") if samples else 1
        rate = baseline_pass_rate(old, known_flaky)
        if record.reasked and record.flaky:
            cleared.add(qid)
            flaky.append(
                FlakyQuestion(qid, n - failures, n, rate, f"re-asked: passed {n - failures} of {n} samples")
            )
            continue
        if rate is None or rate >= 1.0:
            continue
        p = known_flaky_p_value(failures, n, rate)
        if p > alpha:
            cleared.add(qid)
            by_history = qid in known_flaky
            flaky.append(
                FlakyQuestion(
                    qid,
                    n - failures,
                    n,
                    rate,
                    ("cleared by the history of main: " if by_history else "")
                    + f"known flaky (pass rate on main {rate:.0%}): {failures}/{n} failed, "
                    f"binomial p = {p:.3f} > {alpha:g}",
                    from_history=by_history,
                )
            )
    flaky.sort(key=lambda f: f.id)
    return flaky, cleared
