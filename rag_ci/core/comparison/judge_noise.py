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
    kind: Literal["split", "baseline_noise"]
    head_votes: tuple[bool, ...]
    baseline_votes: tuple[bool, ...]

    @property
    def label(self) -> str:
        """What the question's row says."""
        if self.kind == "baseline_noise":
            b = self.baseline_votes
            return (
                f"baseline verdict was noise: {self.metric} on the baseline's answer re-judged "
                f"{b[1:].count(False)} fail, {b[1:].count(True)} pass"
            )
        if len(self.baseline_votes) > 1:
            return f"judge split {split_label(list(self.baseline_votes))} on the baseline's answer ({self.metric})"
        return f"judge split {split_label(list(self.head_votes))} ({self.metric})"


def judge_noise(head: RunResult) -> tuple[JudgeNoise, ...]:
    found = []
    for q in head.questions:
        for name, m in q.metrics.items():
            noise = m.baseline_confirmed is False
            if m.judge_split or noise:
                found.append(
                    JudgeNoise(
                        q.id,
                        name,
                        "split" if m.judge_split else "baseline_noise",
                        tuple(m.confirm_runs),
                        tuple(m.baseline_votes),
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


def confirmation_calls(run: RunResult) -> int:
    """Judge calls this run spent confirming flips (both sides), for the report's cost line."""
    return sum(m.confirm_calls for q in run.questions for m in q.metrics.values())
