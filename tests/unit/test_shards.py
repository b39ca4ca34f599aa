"""One reading of "i/n" for `rag-ci run --shard`, `rag-ci merge` and the engine (rag_ci.core.questionset.shards)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from builders import metric, question, run
from rag_ci.cli import cli
from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.shards import ShardError, parse_shard, select_shard, shard_label, shard_of
from rag_ci.core.scoring.aggregate import aggregate, restrict_to_shard

IDS = [f"Q{i}" for i in range(1, 30)]


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("2/4", (2, 4)), ("4/4", (4, 4))])
def test_a_shard_reads_as_index_and_count_and_back(text, expected):
    assert parse_shard(text) == expected
    assert shard_label(expected) == text


@pytest.mark.parametrize(
    "text, why",
    [
        ("x", "use i/n"),
        ("2", "use i/n"),
        ("1/2/3", "use i/n"),
        ("", "use i/n"),
        ("0/4", "between 1 and n"),
        ("5/4", "between 1 and n"),
    ],
)
def test_a_malformed_shard_says_what_is_expected(text, why):
    with pytest.raises(ShardError, match=why) as excinfo:
        parse_shard(text)
    assert repr(text) in str(excinfo.value)


def test_the_shards_of_n_split_the_questions_exactly_once_in_order():
    questions = [Question(id=q, question="q?") for q in IDS]
    for n in (1, 2, 5):
        slices = [select_shard(questions, (i, n)) for i in range(1, n + 1)]
        assert sorted(q.id for part in slices for q in part) == sorted(IDS)
        for i, part in enumerate(slices, start=1):
            assert all(shard_of(q.id, n) == i for q in part)
            assert [q.id for q in part] == [q for q in IDS if shard_of(q, n) == i]
    assert select_shard(questions, None) == questions


def test_restricting_a_run_to_a_shard_keeps_that_shards_results():
    whole = run(*(question(q, "pass", metrics=[metric("hit_at_k", 1.0, 1.0)]) for q in IDS))
    part = restrict_to_shard(whole, (2, 3))
    assert [q.id for q in part.questions] == [q for q in IDS if shard_of(q, 3) == 2]
    assert part.aggregates == aggregate(part.questions) != whole.aggregates


def test_the_cli_rejects_a_malformed_shard_with_exit_2_and_the_reason():
    result = CliRunner().invoke(cli, ["run", "--shard", "5/4"])
    assert result.exit_code == 2
    assert "between 1 and n" in result.output
