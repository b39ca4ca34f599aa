"""Carrying the last known good verdict forward in the baseline (docs/gate.md).

When main's run errors on a question (a judge outage, a target time-out), its baseline
has no verdict for it, and without this every pull request would be free to break that
question. So the new baseline records, for each question it errored on, the last usable
verdict of the same question (same content hash) from the previous baseline, or what
that baseline had itself carried. compare() judges the question against it (`usable_baseline`).
"""

from __future__ import annotations

from rag_ci.core.comparison.comparability import not_comparable_metrics, schema_problems
from rag_ci.core.results import CarriedVerdict, QuestionResult, RunResult
from rag_ci.core.scoring.verdict import question_verdict


def last_good_verdict(record: QuestionResult | None, sha: str | None) -> CarriedVerdict | None:
    """The usable verdict a record stands for: its own, or the one it carries."""
    if record is None:
        return None
    if record.verdict != "error":
        return CarriedVerdict(
            verdict=record.verdict,
            metrics=dict(record.metrics),
            leaks=list(record.leaks),
            from_sha=sha,
            question_hash=record.question_hash,
        )
    return record.carried


def without_metrics(carried: CarriedVerdict, names: set[str]) -> CarriedVerdict:
    """The carried verdict as if `names` had not been measured (metrics defined differently
    now: their old verdicts are not this gate's)."""
    if not names & set(carried.metrics):
        return carried
    kept = {n: m for n, m in carried.metrics.items() if n not in names}
    return carried.model_copy(
        update={"metrics": kept, "verdict": question_verdict(None, carried.leaks, kept)}
    )


def usable_baseline(old: QuestionResult, left_out: set[str]) -> QuestionResult:
    """The baseline record to judge against: its last known good verdict when it errored
    (without the metrics left out as not comparable)."""
    if old.verdict != "error" or old.carried is None or old.carried.question_hash != old.question_hash:
        return old
    carried = without_metrics(old.carried, left_out)
    return old.model_copy(
        update={"verdict": carried.verdict, "metrics": carried.metrics, "leaks": carried.leaks, "error": None}
    )


def carry_forward(previous: RunResult | None, run: RunResult) -> RunResult:
    """`run` with the last known good verdict attached to every question it errored on.

    Nothing is carried from a broken previous run or one of another schema, nor onto a
    question whose content changed; a metric defined differently now is left out of the
    carried verdict.
    """
    if previous is None or previous.meta.broken or schema_problems(previous.meta, run.meta):
        return run
    left_out = {n.name for n in not_comparable_metrics(previous.meta, run.meta)}
    before = previous.by_id()
    questions, carried_any = [], False
    for record in run.questions:
        carried = None
        if record.verdict == "error":
            carried = last_good_verdict(before.get(record.id), previous.meta.git_sha)
            if carried is not None and carried.question_hash != record.question_hash:
                carried = None
            if carried is not None:
                carried = without_metrics(carried, left_out)
        if carried is not None:
            record = record.model_copy(update={"carried": carried})
            carried_any = True
        questions.append(record)
    return run.model_copy(update={"questions": questions}) if carried_any else run
