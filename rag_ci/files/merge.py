"""`rag-ci merge`: combine the shards of one run into the results.json of an unsharded run.

`rag-ci run --shard i/n` answers a deterministic slice of the question set (by id
hash, rag_ci.core.questionset.shards) and records the whole set's ids, in order, in
`meta.question_ids`. Merging checks that the shards belong together (same question
set, config, judge, thresholds, commit, rag-ci version, cache mode), that they are
exactly shards 1..n of the same n, and that every question of the set is answered
exactly once and in its own shard; then it restores the set's order and recomputes
the aggregates. The result has the same content as an unsharded run (timestamps and
latencies aside): `meta.shard` and `meta.question_ids` are cleared.

Pure: RunResult in, RunResult out. Reading and writing files is rag_ci.cli.merge's job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_ci.core.questionset.shards import ShardError, parse_shard, shard_of
from rag_ci.core.results import QuestionResult, RunMeta, RunResult
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.errors import RagCiError

# What must be equal across the shards of one run, with the words used in errors.
_SAME: dict[str, str] = {
    "schema_version": "results.json schema version",
    "question_set_schema": "question set schema",
    "rag_ci_version": "rag-ci version",
    "question_set_version": "question set version",
    "question_set_hash": "question set hash",
    "config_fingerprint": "config fingerprint",
    "judge": "judge fingerprint",
    "metric_thresholds": "metric thresholds",
    "full": "cache mode (--full)",
    "git_sha": "git commit",
    "git_ref": "git ref",
    "pr_number": "pull request",
    "target_kind": "target kind",
    "question_ids": "question ids",
    "corpus_fingerprints": "documents of the corpora",
}


class MergeError(RagCiError):
    """The shards cannot be merged; the message says which file and why."""


def _value(meta: RunMeta, field: str) -> Any:
    value = getattr(meta, field)
    return value.model_dump() if hasattr(value, "model_dump") else value


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ids(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def merge_results(shards: Sequence[RunResult], names: Sequence[str] | None = None) -> RunResult:
    """One RunResult from shards 1..n of the same run; MergeError when they do not fit together.

    `names` (file names, same order as `shards`) only label the error messages.
    """
    if not shards:
        raise MergeError("no shard to merge")
    labels = list(names) if names is not None else [f"shard file #{k + 1}" for k in range(len(shards))]
    if len(labels) != len(shards):
        raise ValueError("names and shards differ in length")
    ordered_shards, count = _in_shard_order(shards, labels)
    _check_same_run(ordered_shards)
    questions = _questions_once_each(ordered_shards, count)
    return RunResult(
        meta=_merged_meta(ordered_shards, count), questions=questions, aggregates=aggregate(questions)
    )


_Shards = list[tuple[int, RunResult, str]]  # (shard index, its result, its label), in shard order


def _in_shard_order(shards: Sequence[RunResult], labels: list[str]) -> tuple[_Shards, int]:
    """1. Every file is a shard, all of the same n, covering 1..n exactly once."""
    positions: dict[int, int] = {}  # shard index -> position in `shards`
    count: int | None = None
    for k, result in enumerate(shards):
        try:
            index, n = parse_shard(result.meta.shard or "")
        except ShardError:
            raise MergeError(
                f"{labels[k]} is not a shard (meta.shard is {result.meta.shard!r}); merge the files written by "
                f"`rag-ci run --shard i/n`"
            ) from None
        if count is None:
            count = n
        elif n != count:
            first = labels[next(iter(positions.values()))]
            raise MergeError(
                f"{labels[k]} is shard {index}/{n} but {first} is one of {count}: all shards must split the set the same way"
            )
        if index in positions:
            raise MergeError(f"shard {index}/{n} given twice: {labels[positions[index]]} and {labels[k]}")
        if result.meta.question_ids is None:
            raise MergeError(
                f"{labels[k]} has no meta.question_ids (written by an older rag-ci?); re-run the shards"
            )
        positions[index] = k
    assert count is not None
    missing_shards = [i for i in range(1, count + 1) if i not in positions]
    if missing_shards:
        listed = ", ".join(f"{i}/{count}" for i in missing_shards)
        raise MergeError(
            f"shard{'s' if len(missing_shards) > 1 else ''} {listed} missing: pass all {count} shard files"
        )
    return [(i, shards[positions[i]], labels[positions[i]]) for i in range(1, count + 1)], count


def _check_same_run(ordered_shards: _Shards) -> None:
    """2. They belong to the same run."""
    _, first, first_label = ordered_shards[0]
    for _, result, label in ordered_shards[1:]:
        for field, words in _SAME.items():
            mine, theirs = _value(result.meta, field), _value(first.meta, field)
            if mine != theirs:
                detail = (
                    ""
                    if field in ("judge", "question_ids", "metric_thresholds", "corpus_fingerprints")
                    else f": {_short(theirs)} vs {_short(mine)}"
                )
                raise MergeError(
                    f"{first_label} and {label} differ in {words}{detail}; shards of one run must agree"
                )


def _questions_once_each(ordered_shards: _Shards, count: int) -> list[QuestionResult]:
    """3. Every question answered once, in its own shard, and none missing; in the set's order."""
    _, first, first_label = ordered_shards[0]
    order = list(first.meta.question_ids or [])
    known = set(order)
    if len(known) != len(order):
        raise MergeError(f"{first_label}: meta.question_ids has duplicate ids")
    records: dict[str, QuestionResult] = {}
    where: dict[str, str] = {}
    for index, result, label in ordered_shards:
        for record in result.questions:
            if record.id not in known:
                raise MergeError(
                    f"{label}: question {record.id} is not in the question set the shards recorded"
                )
            if record.id in records:
                raise MergeError(f"question {record.id} appears twice: in {where[record.id]} and in {label}")
            home = shard_of(record.id, count)
            if home != index:
                raise MergeError(
                    f"{label} (shard {index}/{count}) holds question {record.id}, which belongs to shard {home}/{count}"
                )
            records[record.id] = record
            where[record.id] = label
    missing = [qid for qid in order if qid not in records]
    if missing:
        raise MergeError(
            f"{len(missing)} question(s) answered by no shard: {_ids(missing)} (an interrupted shard? re-run it, with --resume)"
        )
    return [records[qid] for qid in order]


def _merged_meta(ordered_shards: _Shards, count: int) -> RunMeta:
    first = ordered_shards[0][1]
    metas = [result.meta for _, result, _ in ordered_shards]
    finished = [m.finished_at for m in metas]
    diagnostics = [
        f"[shard {i}/{count}]\n{r.meta.diagnostics}" for i, r, _ in ordered_shards if r.meta.diagnostics
    ]
    # A broken shard makes the whole run unusable as a result (docs/gate.md).
    broken = [f"shard {i}/{count}: {r.meta.broken}" for i, r, _ in ordered_shards if r.meta.broken]
    meta: RunMeta = first.meta.model_copy(
        update={
            "started_at": min(m.started_at for m in metas),
            "finished_at": None if None in finished else max(f for f in finished if f is not None),
            "generator_models": sorted({g for m in metas for g in m.generator_models}),
            "shard": None,
            "question_ids": None,
            "diagnostics": "\n".join(diagnostics)[-4000:] if diagnostics else None,
            # each shard warmed its target up
            "warmup_latency_s": [x for m in metas for x in m.warmup_latency_s],
            "broken": "; ".join(broken) if broken else None,
        }
    )
    return meta
