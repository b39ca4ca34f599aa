"""merge_results: shards of one run -> the results of an unsharded run, or a clear refusal."""

from __future__ import annotations

import pytest

from builders import metric, question
from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.shards import ShardError, parse_shard, select_shard, shard_of
from rag_ci.core.results import JudgeFingerprint, RunMeta, RunResult
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.files.merge import MergeError, merge_results

IDS = [f"Q{i:03d}" for i in range(40)]


def make_meta(shard: str | None, **changes) -> RunMeta:
    values = {
        "rag_ci_version": "test",
        "started_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T00:01:00+00:00",
        "question_set_version": 3,
        "question_set_hash": "qs",
        "config_fingerprint": "cfg",
        "target_kind": "python",
        "metric_thresholds": {"hit_at_k": 1.0},
        "git_sha": "abc",
        "shard": shard,
        "question_ids": list(IDS) if shard else None,
        "generator_models": ["gen-a"],
    }
    values.update(changes)
    return RunMeta(**values)


def record(qid: str):
    verdict = "fail" if qid.endswith("7") else "pass"
    return question(
        qid,
        verdict,
        tags=["t"] if qid.endswith("3") else [],
        corpora=["a", "b"] if qid.endswith("5") else ["a"],
        metrics=[metric("hit_at_k", 0.0 if verdict == "fail" else 1.0, 1.0)],
        cost=0.01,
    )


def shards(n: int, **meta_changes) -> list[RunResult]:
    result = []
    for i in range(1, n + 1):
        records = [record(q) for q in IDS if shard_of(q, n) == i]
        result.append(
            RunResult(
                meta=make_meta(f"{i}/{n}", **meta_changes), questions=records, aggregates=aggregate(records)
            )
        )
    return result


def test_shard_of_is_the_engine_rule():
    questions = [Question(id=q, question="q?") for q in IDS]
    for n in (1, 2, 3, 7):
        for i in range(1, n + 1):
            assert [q.id for q in select_shard(questions, (i, n))] == [q for q in IDS if shard_of(q, n) == i]
    assert parse_shard("2/4") == (2, 4)
    for not_a_shard in ("5/4", "x", ""):
        with pytest.raises(ShardError):
            parse_shard(not_a_shard)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_merge_restores_order_and_aggregates_of_an_unsharded_run(n):
    parts = shards(n)
    assert all(p.questions for p in parts) or n == 5
    unsharded_records = [record(q) for q in IDS]
    unsharded = RunResult(
        meta=make_meta(None), questions=unsharded_records, aggregates=aggregate(unsharded_records)
    )
    merged = merge_results(list(reversed(parts)))  # order of the files does not matter
    assert merged.model_dump() == unsharded.model_dump()
    assert merged.meta.shard is None and merged.meta.question_ids is None


def test_merge_takes_time_span_models_and_diagnostics_from_all_shards():
    parts = shards(2)
    parts[0].meta.started_at, parts[1].meta.started_at = (
        "2026-01-01T00:00:05+00:00",
        "2026-01-01T00:00:01+00:00",
    )
    parts[0].meta.finished_at = "2026-01-01T00:09:00+00:00"
    parts[1].meta.generator_models = ["gen-b"]
    parts[1].meta.diagnostics = "target said: boom"
    merged = merge_results(parts)
    assert merged.meta.started_at == "2026-01-01T00:00:01+00:00"
    assert merged.meta.finished_at == "2026-01-01T00:09:00+00:00"
    assert merged.meta.generator_models == ["gen-a", "gen-b"]
    assert merged.meta.diagnostics == "[shard 2/2]\ntarget said: boom"


def test_a_broken_shard_makes_the_merged_run_broken():
    parts = shards(2)
    parts[1].meta.broken = "9/20 questions errored"
    assert merge_results(parts).meta.broken == "shard 2/2: 9/20 questions errored"
    assert merge_results(shards(2)).meta.broken is None


def test_missing_duplicate_and_mismatched_shards_are_refused():
    parts = shards(3)
    with pytest.raises(MergeError, match=r"shard 2/3 missing"):
        merge_results([parts[0], parts[2]], names=["s1.json", "s3.json"])
    with pytest.raises(MergeError, match=r"shard 1/3 given twice: a.json and b.json"):
        merge_results(
            [parts[0], parts[0], parts[1], parts[2]], names=["a.json", "b.json", "c.json", "d.json"]
        )
    other = shards(2)
    with pytest.raises(MergeError, match=r"is shard 1/2 but .* one of 3"):
        merge_results([parts[0], other[0]])
    unsharded = RunResult(meta=make_meta(None), questions=[])
    with pytest.raises(MergeError, match=r"x.json is not a shard"):
        merge_results([unsharded], names=["x.json"])
    with pytest.raises(MergeError, match="no shard"):
        merge_results([])


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("question_set_hash", "other", "question set hash"),
        ("config_fingerprint", "cfg2", "config fingerprint"),
        ("metric_thresholds", {"hit_at_k": 0.5}, "metric thresholds"),
        ("git_sha", "def", "git commit"),
        ("full", True, "cache mode"),
        ("rag_ci_version", "9.9", "rag-ci version"),
    ],
)
def test_shards_of_different_runs_are_refused(field, value, words):
    parts = shards(2)
    setattr(parts[1].meta, field, value)
    with pytest.raises(MergeError, match=f"s1.json and s2.json differ in {words}"):
        merge_results(parts, names=["s1.json", "s2.json"])


def test_different_judges_are_refused():
    judge = JudgeFingerprint(
        provider="openai",
        model="gpt-4.1-mini-2025-04-14",
        temperature=0.0,
        deepeval_version="4.3.1",
        metrics={"faithfulness": {"threshold": 0.7}},
        prompt_hash="p",
    )
    parts = shards(2)
    parts[0].meta.judge = judge
    parts[1].meta.judge = judge.model_copy(update={"model": "gpt-4.1-2025-04-14"})
    with pytest.raises(MergeError, match="differ in judge fingerprint"):
        merge_results(parts)


def test_questions_missing_duplicated_or_in_the_wrong_shard_are_refused():
    parts = shards(3)
    lost = parts[1].questions.pop()
    with pytest.raises(MergeError, match=f"1 question\\(s\\) answered by no shard: {lost.id}"):
        merge_results(parts)

    parts = shards(3)
    stray = parts[0].questions.pop(0)
    parts[1].questions.append(stray)
    with pytest.raises(MergeError, match=f"holds question {stray.id}, which belongs to shard 1/3"):
        merge_results(parts)

    parts = shards(3)
    parts[0].questions.append(parts[0].questions[0])
    with pytest.raises(MergeError, match="appears twice"):
        merge_results(parts)

    parts = shards(1)
    parts[0].questions.append(record("ZZZ"))
    with pytest.raises(MergeError, match="ZZZ is not in the question set"):
        merge_results(parts)

    parts = shards(2)
    for part in parts:
        part.meta.question_ids = None
    with pytest.raises(MergeError, match="no meta.question_ids"):
        merge_results(parts)
