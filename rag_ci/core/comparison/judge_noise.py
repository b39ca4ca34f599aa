"""The judge's own noise in a comparison (docs/noise.md, "Judge noise"). Pure.

The scorer confirmed each freshly judged pass → fail flip on both sides (rag_ci.judges.confirmation)
and wrote the votes on the head's metric: `confirm_runs` for the head's answer, `baseline_votes`
for the baseline's stored answer (its stored verdict first). Here the baseline is read as those
votes established it before the questions are sorted:

- the baseline's pass did not hold up (its answer failed when asked again): it was a noise pass,
  the metric failed on the baseline too, so its failure now is no regression (nor "worse");
  listed as "baseline verdict was noise";
- either side still split: the flip is not established, the metric takes the same verdict on
  both sides and gates nothing; listed as "judge split 2–1" in the question's row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rag_ci.core.results import QuestionResult, RunResult
from rag_ci.core.scoring.judge_votes import split_label


@dataclass(frozen=True)
class JudgeNoise:
    """One metric of one question whose flip the confirmation did not establish."""

    id: str
    metric: str
    kind: Literal["split", "baseline_noise", "disagreed"]
    head_votes: tuple[bool, ...]
    baseline_votes: tuple[bool, ...]

    passed: bool | None = None  # the verdict that holds, for "disagreed"
    on_baseline: bool = False  # a split of the baseline's stored answer (else of this PR's)
    split_on: str | None = None  # the claim or statement the votes disagreed on (untrusted)

    @property
    def label(self) -> str:
        """What the question's row says, with what the votes disagreed on when it is known."""
        on = f" — split on: “{self.split_on}”" if self.split_on else ""
        return self._verdict_words() + on

    def _verdict_words(self) -> str:
        if self.kind == "disagreed":
            held = "pass" if self.passed else "fail"
            return f"{self.metric} judged {_tally(list(self.head_votes), held)} on this PR's answer: its {held} holds"
        if self.kind == "baseline_noise":
            b = self.baseline_votes
            return (
                f"baseline verdict was noise: {self.metric} on the baseline's answer re-judged "
                f"{b[1:].count(False)} fail, {b[1:].count(True)} pass"
            )
        if self.on_baseline:
            return f"judge split {split_label(list(self.baseline_votes))} on the baseline's answer ({self.metric})"
        return f"judge split {split_label(list(self.head_votes))} ({self.metric})"


def judge_noise(head: RunResult) -> tuple[JudgeNoise, ...]:
    """The one list of unstable verdicts: every metric whose votes disagreed and established no
    flip (split, a baseline pass that was noise, or a verdict that held against a dissent).
    A metric that errored is an error, never noise; an established regression is a gating row."""
    found = []
    for q in head.questions:
        for name, m in q.metrics.items():
            kind: Literal["split", "baseline_noise", "disagreed"] | None = None
            if m.error is not None:
                continue
            if m.judge_split:
                kind = "split"
            elif m.baseline_confirmed is False:
                kind = "baseline_noise"
            elif len(set(m.confirm_runs)) > 1 and m.baseline_confirmed is not True:
                kind = "disagreed"
            if kind is not None:
                # A split on the baseline's side leaves it unestablished; established, the head split.
                on_baseline = kind == "split" and len(m.baseline_votes) > 1 and m.baseline_confirmed is None
                found.append(
                    JudgeNoise(
                        q.id,
                        name,
                        kind,
                        tuple(m.confirm_runs),
                        tuple(m.baseline_votes),
                        m.passed,
                        on_baseline,
                        m.split_on,
                    )
                )
    return tuple(found)


def with_established_baseline(base: RunResult, head: RunResult) -> RunResult:
    """The baseline as confirmation established it: a metric whose stored pass was noise fails, one
    whose stored fail was noise (re-judged, its pass established) passes, and one whose flip stayed
    split takes the head's verdict (no flip, nothing to gate)."""
    corrections: dict[str, dict[str, bool | None]] = {}
    for q in head.questions:
        for name, m in q.metrics.items():
            if not m.baseline_votes:
                continue
            if m.judge_split or m.baseline_confirmed is False:
                corrections.setdefault(q.id, {})[name] = m.passed
            elif m.baseline_confirmed is True and m.baseline_votes[0] is False:
                corrections.setdefault(q.id, {})[name] = True
    if not corrections:
        return base
    questions = [_corrected(q, corrections[q.id]) if q.id in corrections else q for q in base.questions]
    return base.model_copy(update={"questions": questions})


def _corrected(old: QuestionResult, verdicts: dict[str, bool | None]) -> QuestionResult:
    metrics = {
        name: m.model_copy(update={"passed": verdicts[name]})
        if name in verdicts and m.passed is not None and verdicts[name] is not None
        else m
        for name, m in old.metrics.items()
    }
    verdict = old.verdict
    if old.verdict in ("pass", "fail"):  # an error or a routing leak stands whatever the judge says
        verdict = "fail" if any(m.passed is False for m in metrics.values()) else "pass"
    return old.model_copy(update={"metrics": metrics, "verdict": verdict})


def _tally(votes: list[bool], first: str) -> str:
    """'3× fail', or '5×: 4 fail, 1 pass' when the votes disagree (`first`: the side named first)."""
    fails, passes = votes.count(False), votes.count(True)
    if not fails or not passes:
        return f"{len(votes)}× {'fail' if fails else 'pass'}"
    counts = {"fail": f"{fails} fail", "pass": f"{passes} pass"}
    other = "pass" if first == "fail" else "fail"
    return f"{len(votes)}×: {counts[first]}, {counts[other]}"


def confirmation_words(record: QuestionResult | None) -> str | None:
    """What established a judged regression, for its row: 'correctness judged 3× fail on this PR,
    the baseline's answer 3× pass'. None when no flip of this question was established so."""
    if record is None:
        return None
    for name, m in record.metrics.items():
        if m.passed is False and m.baseline_confirmed is True and m.baseline_votes:
            head = f"{name} judged {_tally(list(m.confirm_runs), 'fail')} on this PR"
            base = list(m.baseline_votes)
            if base[0]:
                return f"{head}, the baseline's answer {_tally(base, 'pass')}"
            # Its stored fail re-judged: the pass it established is the evidence.
            return f"{head}, the baseline's answer re-judged {_tally(base[1:], 'pass')} (its stored fail was noise)"
    return None


def confirmation_calls(run: RunResult) -> int:
    """Judge calls this run spent confirming flips (both sides), for the report's cost line."""
    return sum(m.confirm_calls for q in run.questions for m in q.metrics.values())
