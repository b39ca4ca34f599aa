"""A run whose judge stopped calling (its spend cap reached, its credentials refused).

The answers the judge finished keep their verdicts and go to the journal; an answer it left
with a metric unjudged is "not evaluated": an error (never a pass) in results.json, left out
of the journal so that `--resume` asks and judges it again. Once results.json is written the
run ends with the judge's reason (exit 2): "stopped at $X of $Y: raise judge.max_cost_usd…".
"""

from __future__ import annotations

from collections.abc import Callable

from rag_ci.core.results import QuestionResult
from rag_ci.core.scoring.judge_scorer import JudgeScorer
from rag_ci.errors import RagCiError
from rag_ci.files.journal import Journal


def left_unjudged(
    judge: JudgeScorer | None, record: QuestionResult, redact: Callable[[str], str]
) -> QuestionResult | None:
    """`record` marked not evaluated when the judge stopped before judging all of it, else None."""
    stopped = judge.stopped if judge is not None else None
    if stopped is None or not any(m.kind == "judge" and m.error for m in record.metrics.values()):
        return None
    return record.model_copy(update={"verdict": "error", "error": redact(f"not evaluated: {stopped}")})


def journal_unless_unjudged(
    judge: JudgeScorer | None, record: QuestionResult, redact: Callable[[str], str], journal: Journal
) -> QuestionResult:
    """The record the run keeps: journaled when judged whole, else marked not evaluated and left
    out of the journal, so that `--resume` asks and judges it again."""
    unjudged = left_unjudged(judge, record, redact)
    if unjudged is not None:
        return unjudged
    journal.append(record)
    return record


def raise_if_stopped(judge: JudgeScorer | None, redact: Callable[[str], str]) -> None:
    """The judge's reason as the run's error (redacted: a refusal may quote the key it was sent)."""
    stopped = judge.stopped if judge is not None else None
    if stopped is not None:
        raise RagCiError(redact(stopped))
