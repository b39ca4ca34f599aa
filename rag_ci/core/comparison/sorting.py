"""The questions of two comparable runs sorted one by one (docs/gate.md): regressions, worse,
gains, changed, new, removed, leaks, and those compared with a carried baseline verdict.

Questions are joined by id (renamed ones already carry their id of now: rag_ci.core.comparison.identity).
A regression is a question that passed on the baseline and does not pass now; a question that
already failed and now leaks, errors or loses a metric that passed is worse, and gates the same
way; a routing leak gates wherever it appears. A question whose content hash changed is reported
as changed instead, because it no longer asks the same thing. When the baseline errored on a
question, its last known good verdict (carried forward by rag_ci.core.comparison.carry) stands in
for it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from rag_ci.core.comparison.carry import usable_baseline
from rag_ci.core.comparison.comparison import Comparison
from rag_ci.core.comparison.question_change import (
    QuestionChange,
    question_change,
    what_got_worse,
)
from rag_ci.core.comparison.retrieval_diff import chunk_identity
from rag_ci.core.results import QuestionResult, RunResult

CHUNK_IDS_UNSTABLE = "chunk ids are not stable across index builds: compared by text"


def sort_questions(
    base: RunResult,
    head: RunResult,
    *,
    left_out: set[str],
    renamed: Mapping[str, str],
    top_latency: int,
) -> Comparison:
    """A comparison with each question of both runs in its row, and nothing else yet. `left_out`:
    the metrics not comparable, out of the carried baseline verdicts too; `renamed`: {id now: id
    on the baseline}."""
    old_by_id, new_by_id = base.by_id(), head.by_id()
    regressions, gains, changed, worse, leaks, unjudged, carried = [], [], [], [], [], [], []
    both: list[QuestionChange | _Steady] = []  # every question of both runs, in head order
    for qid, new in new_by_id.items():
        recorded = old_by_id.get(qid)
        if recorded is None:
            continue
        if (
            recorded.passed
            and new.passed
            and recorded.question_hash == new.question_hash
            and qid not in renamed
        ):
            # most questions of a large run: no row to show, see _Steady
            both.append(_Steady.of(recorded, new))
            continue
        old = usable_baseline(recorded, left_out)
        change = question_change(old, new)
        if qid in renamed:
            change = replace(change, renamed_from=renamed[qid])
        if old is not recorded and old.question_hash == new.question_hash:
            change = replace(
                change,
                baseline_carried=True,
                carried_from_sha=recorded.carried.from_sha if recorded.carried else None,
            )
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
        elif why := what_got_worse(old, new, change):
            worse.append(replace(change, worse_because=why))
            continue
        if new.verdict == "routing_error":
            leaks.append(change)  # still leaking, or on a changed question: a leak always gates
    new_only = [question_change(None, r) for qid, r in new_by_id.items() if qid not in old_by_id]
    leaks.extend(c for c in new_only if c.new_verdict == "routing_error")
    removed = [question_change(r, None) for qid, r in old_by_id.items() if qid not in new_by_id]
    largest = _largest_latency_changes(both, top_latency)
    same_text = sum(c.same_text_contexts for c in both)
    # Most chunks came back with their text but under another id: the index mints ids per build.
    ids_unstable = same_text >= 3 and 2 * sum(c.same_text_other_id for c in both) > same_text
    return Comparison(
        regressions=tuple(regressions),
        gains=tuple(gains),
        changed=tuple(changed),
        new=tuple(new_only),
        removed=tuple(removed),
        unstable=tuple(q.id for q in head.questions if q.unstable),
        worse=tuple(worse),
        leaks=tuple(leaks),
        no_baseline_verdict=tuple(unjudged),
        carried=tuple(carried),
        largest_latency_changes=tuple(largest),
        notes=(CHUNK_IDS_UNSTABLE,) if ids_unstable else (),
    )


def _largest_latency_changes(both: list[QuestionChange | _Steady], top: int) -> list[QuestionChange]:
    with_latency = [c for c in both if c.latency_delta_s is not None]
    return [
        question_change(c.old, c.new) if isinstance(c, _Steady) else c
        for c in sorted(with_latency, key=lambda c: abs(c.latency_delta_s or 0.0), reverse=True)[:top]
    ]


@dataclass(frozen=True, slots=True)
class _Steady:
    """A question that passed on both runs, unchanged: no row of the comparison shows it, so
    its QuestionChange is made only if it is among the largest latency changes (comparing
    50,000 questions spent most of its time making one for each). It answers what every
    question contributes: its latency delta and its chunks' identity."""

    old: QuestionResult
    new: QuestionResult
    same_text_contexts: int
    same_text_other_id: int

    @classmethod
    def of(cls, old: QuestionResult, new: QuestionResult) -> _Steady:
        return cls(old, new, *chunk_identity(old.contexts, new.contexts))

    @property
    def latency_delta_s(self) -> float | None:
        if self.old.latency_s is None or self.new.latency_s is None:
            return None
        return self.new.latency_s - self.old.latency_s
