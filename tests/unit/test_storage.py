"""results.json on disk: atomic writes, clear errors for bad files, the resume journal."""

import json

import pytest

from builders import question, run
from rag_ci.storage import Journal, journal_path, load_results, save_results, write_text_atomic
from rag_ci.errors import RagCiError


def test_results_round_trip(tmp_path):
    original = run(question("A"), question("B", "fail"))
    save_results(tmp_path / "r.json", original)
    assert load_results(tmp_path / "r.json") == original


def test_atomic_write_leaves_no_temp_files_and_replaces_whole(tmp_path):
    target = tmp_path / "out" / "r.json"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and [p.name for p in target.parent.iterdir()] == ["r.json"]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "baseline not found"),
        ("{not json", "is not valid JSON"),
        ('{"a": 1}', "is not a rag-ci results.json"),
        ('{"meta": {"schema_version": 99}, "questions": []}', "schema_version 99"),
        ('{"meta": {"schema_version": 1}, "questions": [{"id": 3}]}', "is corrupt"),
    ],
)
def test_bad_baselines_get_clear_errors(tmp_path, content, message):
    path = tmp_path / "base.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(RagCiError, match=message):
        load_results(path, what="baseline")


def test_journal_resumes_only_the_same_run_and_skips_a_torn_line(tmp_path):
    path = journal_path(tmp_path / "results.json")
    journal = Journal(path, {"config": "c1"})
    journal.open([])
    journal.append(question("A"))
    journal.append(question("B"))
    journal.close(remove=False)
    with open(path, "a") as handle:
        handle.write('{"id": "C", "quest')  # killed mid-write
    assert sorted(Journal(path, {"config": "c1"}).read_finished()) == ["A", "B"]
    assert Journal(path, {"config": "other"}).read_finished() == {}
    assert json.loads(path.read_text().splitlines()[0]) == {"config": "c1"}
