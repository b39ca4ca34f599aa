"""Which baseline question a question of this run is (docs/gate.md). Pure.

Questions are joined by id. A pull request that renames a question, even invisibly, must not
turn its regression into "removed" + "new" (neither gates): a question of this run whose id
the baseline does not have, and whose question hash is that of exactly one baseline question
this run no longer has, **is** that question, renamed. It is compared with it and gates. The
question hash covers what is asked and expected, never the id (rag_ci.core.questionset.questions).
A question re-added under several ids is each of them: every copy is compared with it, so the
worst of them gates (two failing copies of a passing question are two regressions, not "new").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from rag_ci.core.results import QuestionResult, RunResult


def renamed_questions(
    baseline: Iterable[tuple[str, str]], current: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """{id now: id on the baseline} for renamed questions, from (id, question hash) pairs.

    A hash shared by several removed questions pairs none of them: which is which would be
    a guess. A hash of one removed question shared by several added ones pairs each of them
    with it (several ids now may name one baseline id)."""
    base, now = dict(baseline), dict(current)
    removed = {qid: h for qid, h in base.items() if qid not in now}
    added = {qid: h for qid, h in now.items() if qid not in base}
    removed_hashes = Counter(removed.values())
    old_by_hash = {h: qid for qid, h in removed.items() if removed_hashes[h] == 1}
    return {qid: old_by_hash[h] for qid, h in added.items() if h in old_by_hash}


def with_current_ids(baseline: RunResult, head: RunResult) -> tuple[RunResult, dict[str, str]]:
    """The baseline with each renamed question under its id in `head`, and {id now: old id}."""
    renamed = renamed_questions(
        ((q.id, q.question_hash) for q in baseline.questions),
        ((q.id, q.question_hash) for q in head.questions),
    )
    if not renamed:
        return baseline, {}
    new_ids: dict[str, list[str]] = {}
    for new, old in sorted(renamed.items()):
        new_ids.setdefault(old, []).append(new)
    questions = [
        copy
        for q in baseline.questions
        for copy in ([q.model_copy(update={"id": new}) for new in new_ids[q.id]] if q.id in new_ids else [q])
    ]
    return baseline.model_copy(update={"questions": questions}), renamed


def renamed_keys(values: Mapping[str, float], renamed: Mapping[str, str]) -> dict[str, float]:
    """A mapping keyed by baseline ids (the history's known-flaky questions) under the ids of now."""
    out = {qid: value for qid, value in values.items() if qid not in set(renamed.values())}
    out.update({new: values[old] for new, old in renamed.items() if old in values})
    return out


def baseline_records(
    baseline: RunResult | None, questions: Iterable[tuple[str, str]]
) -> dict[str, QuestionResult]:
    """The baseline's record of each question about to be asked, by its id now (renamed
    questions included): what the engine re-asks flips against."""
    if baseline is None:
        return {}
    pairs = list(questions)
    by_id = baseline.by_id()
    renamed = renamed_questions(((q.id, q.question_hash) for q in baseline.questions), pairs)
    return {**by_id, **{new: by_id[old] for new, old in renamed.items()}}
