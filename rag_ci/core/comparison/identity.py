"""Which baseline question a question of this run is (docs/gate.md). Pure.

Questions are joined by id. A pull request that renames a question, even invisibly, must not
turn its regression into "removed" + "new" (neither gates): a question of this run whose id
the baseline does not have, and whose question hash is that of exactly one baseline question
this run no longer has, **is** that question, renamed. It is compared with it and gates. The
question hash covers what is asked and expected, never the id (rag_ci.core.questionset.questions).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from rag_ci.core.scoring.results import QuestionResult, RunResult


def renamed_questions(baseline: Iterable[tuple[str, str]], current: Iterable[tuple[str, str]]) -> dict[str, str]:
    """{id now: id on the baseline} for renamed questions, from (id, question hash) pairs.

    A hash shared by several removed or several added questions pairs none of them: which
    is which would be a guess."""
    base, now = dict(baseline), dict(current)
    removed = {qid: h for qid, h in base.items() if qid not in now}
    added = {qid: h for qid, h in now.items() if qid not in base}
    removed_hashes, added_hashes = Counter(removed.values()), Counter(added.values())
    old_by_hash = {h: qid for qid, h in removed.items() if removed_hashes[h] == 1}
    return {qid: old_by_hash[h] for qid, h in added.items() if added_hashes[h] == 1 and h in old_by_hash}


def with_current_ids(baseline: RunResult, head: RunResult) -> tuple[RunResult, dict[str, str]]:
    """The baseline with each renamed question under its id in `head`, and {id now: old id}."""
    renamed = renamed_questions(((q.id, q.question_hash) for q in baseline.questions),
                                ((q.id, q.question_hash) for q in head.questions))
    if not renamed:
        return baseline, {}
    new_id = {old: new for new, old in renamed.items()}
    questions = [q.model_copy(update={"id": new_id[q.id]}) if q.id in new_id else q for q in baseline.questions]
    return baseline.model_copy(update={"questions": questions}), renamed


def renamed_keys(values: Mapping[str, float], renamed: Mapping[str, str]) -> dict[str, float]:
    """A mapping keyed by baseline ids (the history's known-flaky questions) under the ids of now."""
    old_to_new = {old: new for new, old in renamed.items()}
    return {old_to_new.get(qid, qid): value for qid, value in values.items()}


def baseline_records(baseline: RunResult | None, questions: Iterable[tuple[str, str]]) -> dict[str, QuestionResult]:
    """The baseline's record of each question about to be asked, by its id now (renamed
    questions included): what the engine re-asks flips against."""
    if baseline is None:
        return {}
    pairs = list(questions)
    by_id = baseline.by_id()
    renamed = renamed_questions(((q.id, q.question_hash) for q in baseline.questions), pairs)
    return {**by_id, **{new: by_id[old] for new, old in renamed.items()}}
