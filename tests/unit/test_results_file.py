"""results.json on disk: atomic writes, clear errors for bad files, the resume journal."""

import json
import os
from pathlib import Path

import pytest

from builders import question, run
from rag_ci.errors import RagCiError
from rag_ci.files.atomic import cannot_write, write_text_atomic
from rag_ci.files.journal import Journal, journal_path
from rag_ci.files.lock import OutputLock, lock_path
from rag_ci.files.results_file import load_results, save_results


def test_results_round_trip(tmp_path):
    original = run(question("A"), question("B", "fail"))
    save_results(tmp_path / "r.json", original)
    assert load_results(tmp_path / "r.json") == original


def test_atomic_write_leaves_no_temp_files_and_replaces_whole(tmp_path):
    target = tmp_path / "out" / "r.json"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and [p.name for p in target.parent.iterdir()] == ["r.json"]


@pytest.fixture
def umask():
    """Set the process's umask for one test, and put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_written_files_honour_the_umask_like_open_does(tmp_path, umask, mask, mode):
    # Before: always 0600 (mkstemp's mode), so another user could not read results.json.
    umask(mask)
    save_results(tmp_path / "r.json", run(question("A")))
    write_text_atomic(tmp_path / "report.html", "<html></html>")
    journal = Journal(tmp_path / "r.json.partial.jsonl", {"run": 1})
    journal.open([])
    journal.close(remove=False)
    for name in ("r.json", "report.html", "r.json.partial.jsonl"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode, name


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


def test_a_resume_that_dies_while_rewriting_the_journal_loses_no_finished_question(tmp_path):
    path = journal_path(tmp_path / "results.json")
    first = Journal(path, {"config": "c1"})
    first.open([])
    for i in range(3000):
        first.append(question(f"Q{i:04d}"))
    first.close(remove=False)

    def dies_halfway():  # the resumed records, then the process is killed mid-rewrite
        for i, record in enumerate(Journal(path, {"config": "c1"}).read_finished().values()):
            if i == 1500:
                raise KeyboardInterrupt
            yield record

    with pytest.raises(KeyboardInterrupt):
        Journal(path, {"config": "c1"}).open(dies_halfway())
    assert len(Journal(path, {"config": "c1"}).read_finished()) == 3000
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temp file left behind


def test_a_resumed_journal_keeps_the_old_records_and_takes_new_ones(tmp_path):
    path = journal_path(tmp_path / "results.json")
    journal = Journal(path, {"config": "c1"})
    journal.open([question("A"), question("B")])
    journal.append(question("C"))
    journal.close(remove=False)
    assert sorted(Journal(path, {"config": "c1"}).read_finished()) == ["A", "B", "C"]


def test_a_second_lock_on_the_same_output_is_refused_with_the_holders_pid(tmp_path):
    output = tmp_path / "out" / "results.json"
    with OutputLock(output):
        with pytest.raises(
            RagCiError, match=rf"another rag-ci run is writing {output} \(pid {os.getpid()}\)"
        ):
            OutputLock(output).acquire()
        with OutputLock(tmp_path / "other.json"):  # another output is fine
            pass
    assert not lock_path(output).exists()
    with OutputLock(output):  # released: the next run may start
        assert lock_path(output).read_text().strip() == str(os.getpid())


def test_an_output_that_is_a_folder_is_refused(tmp_path):
    with pytest.raises(RagCiError, match="is a folder; give a file name"):
        write_text_atomic(tmp_path, "text")
    with pytest.raises(RagCiError, match="is a folder"):
        OutputLock(tmp_path).acquire()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_reported_as_its_cause():
    with pytest.raises(OSError) as caught:  # /dev/full answers every write with ENOSPC
        with open("/dev/full", "w") as handle:
            handle.write("x")
    error = cannot_write(Path("results.json"), caught.value)
    assert str(error) == "cannot write results.json: No space left on device (the disk is full)"
    with pytest.raises(RagCiError, match="is not a regular file"):
        write_text_atomic(Path("/dev/full"), "x")  # never replaces a device


def test_results_json_is_written_question_by_question_with_exactly_the_bytes_of_one_dump(tmp_path):
    # Streamed, never one string of the whole file, and the same file as before.
    from rag_ci.files.results_layout import results_json_chunks

    result = run(*(question(f"Q{i}", answer="naïve “quoted” \\ answer\nline 2") for i in range(3)))
    chunks = list(results_json_chunks(result))
    assert len(chunks) == 3 + 2  # the run's head, one chunk per question, the run's tail
    assert "".join(chunks) == result.model_dump_json(indent=2) + "\n"
    save_results(tmp_path / "r.json", result)
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == result.model_dump_json(indent=2) + "\n"
    empty = run()
    assert "".join(results_json_chunks(empty)) == empty.model_dump_json(indent=2) + "\n"


def nested(levels: int):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "rag-ci's layout"])
@pytest.mark.parametrize(("levels", "refused"), [(58, False), (61, False), (62, True), (500, True)])
def test_nesting_in_a_free_form_field_is_refused_past_64_levels_of_the_whole_file(
    tmp_path, levels, refused, indent
):
    # request sits 3 levels down (file → questions → question), so 61 more levels is the deepest allowed.
    data = json.loads(run(question("Q1"), question("Q2")).model_dump_json())
    data["questions"][0]["request"] = {"deep": nested(levels - 1)}
    (tmp_path / "r.json").write_text(json.dumps(data, indent=indent))
    if refused:
        with pytest.raises(RagCiError, match="nested deeper than 64 levels"):
            load_results(tmp_path / "r.json")
    else:
        assert load_results(tmp_path / "r.json").questions[0].request["deep"] == nested(levels - 1)


def test_loaded_results_share_no_per_object_bookkeeping_and_copies_stay_independent(tmp_path):
    save_results(tmp_path / "r.json", run(question("Q1"), question("Q2")))
    loaded = load_results(tmp_path / "r.json")
    first, second = loaded.questions
    # one shared set: half the memory of a loaded run
    assert first.model_fields_set is second.model_fields_set
    edited = first.model_copy(update={"answer": "changed"})
    assert (edited.answer, first.answer) == ("changed", "ok")
    assert load_results(tmp_path / "r.json") == loaded
    first.answer = "assigned"  # pydantic adds the name to the object's (shared) set: it keeps nothing
    assert (first.answer, second.answer) == ("assigned", "ok") and not second.model_fields_set


def layout_run():
    """Questions whose text holds what the layout's lines look like, and a nested free-form request."""
    tricky = 'a "quoted" },\n    { line and \\ and ]'
    return run(question("Q1", answer=tricky), question("Q2", "fail", answer="naïve “x”"), question("Q3"))


def test_a_results_json_in_rag_cis_layout_is_read_question_by_question_as_a_whole_file_parse_reads_it(
    tmp_path,
):
    # Pydantic's parse of a whole 50,000-question file was as much memory again as the run.
    from rag_ci.core.results import RunResult
    from rag_ci.files.results_layout import read_streamed

    result = layout_run()
    result.questions[2].request = {"id": "Q3", "extra": {"nested": [{"deep": [1, 2]}]}}
    save_results(tmp_path / "r.json", result)
    streamed = read_streamed(tmp_path / "r.json")
    assert streamed is not None and len(streamed.questions) == 3
    assert streamed == RunResult.model_validate_json((tmp_path / "r.json").read_bytes()) == result
    assert load_results(tmp_path / "r.json") == result


@pytest.mark.parametrize("shape", ["compact", "indent 4", "one question"])
def test_a_results_json_in_another_layout_is_read_whole_with_the_same_result(tmp_path, shape):
    from rag_ci.files.results_layout import read_streamed

    result = layout_run() if shape != "one question" else run(question("Q1"))
    data = json.loads(result.model_dump_json())
    if shape == "compact":
        text = json.dumps(data)
    elif shape == "indent 4":
        text = json.dumps(data, indent=4)
    else:
        text = result.model_dump_json(indent=2)
    (tmp_path / "r.json").write_text(text)
    if shape == "one question":
        assert read_streamed(tmp_path / "r.json") == result  # one question is the layout too
    else:
        assert read_streamed(tmp_path / "r.json") is None
    loaded = load_results(tmp_path / "r.json")
    assert [q.id for q in loaded.questions] == [q["id"] for q in json.loads(text)["questions"]]


def test_a_corrupt_question_in_rag_cis_layout_gets_the_precise_error(tmp_path):
    save_results(tmp_path / "r.json", layout_run())
    text = (tmp_path / "r.json").read_text().replace('"latency_s": 0.1', '"latency_s": "slow"', 1)
    assert '"slow"' in text
    (tmp_path / "r.json").write_text(text)
    with pytest.raises(RagCiError, match=r"is corrupt: questions\.0\.latency_s"):
        load_results(tmp_path / "r.json")
    (tmp_path / "r.json").write_text(text.replace('"slow"', "0.1")[:-40])  # cut short
    with pytest.raises(RagCiError, match="is not valid JSON"):
        load_results(tmp_path / "r.json")


def test_an_array_laid_out_like_the_questions_inside_meta_is_not_taken_for_them(tmp_path):
    # Its questions parse one by one, but the top-level `questions` is another (empty) array.
    from rag_ci.files.results_layout import read_streamed

    result = run(question("Q1"))
    meta = result.meta.model_dump_json()
    piece = "    " + result.questions[0].model_dump_json(indent=2).replace("\n", "\n    ")
    text = (
        '{\n  "meta": {"unknown": {"x": 1,\n  "questions": [\n'
        + piece
        + "\n  ]}, "
        + meta[1:]
        + ',\n  "questions": []\n}\n'
    )
    (tmp_path / "r.json").write_text(text)
    assert json.loads(text)["questions"] == []
    assert read_streamed(tmp_path / "r.json") is None
    assert load_results(tmp_path / "r.json").questions == []


@pytest.fixture
def unfrozen():
    import gc

    yield gc
    gc.unfreeze()  # what a test froze goes back under the collector, for the tests after it


def test_a_large_run_kept_until_exit_is_frozen_out_of_the_cycle_collectors_walks_and_a_small_one_is_not(
    tmp_path, unfrozen
):
    # After loading two 50,000-question runs, the collector walked every object of
    # both again, first once the load ended and then at each full collection (5 of 17 s of a `compare`).
    from rag_ci.files.results_file import FROZEN_FROM, keep_until_exit

    small, large = tmp_path / "small.json", tmp_path / "large.json"
    save_results(small, run(*(question(f"Q{i}") for i in range(FROZEN_FROM - 1))))
    save_results(large, run(*(question(f"Q{i}") for i in range(FROZEN_FROM))))
    unfrozen.unfreeze()

    def walked(obj) -> bool:  # gc.get_objects lists what collections walk, not the frozen objects
        return any(o is obj for o in unfrozen.get_objects())

    kept = keep_until_exit(load_results(small))
    assert unfrozen.get_freeze_count() == 0 and walked(kept.questions[0].__dict__)
    kept = keep_until_exit(load_results(large))
    assert unfrozen.get_freeze_count() > 10 * FROZEN_FROM  # the run's objects (and what lived before them)
    assert not walked(kept.questions[0].__dict__) and not walked(kept.questions[-1].__dict__)
    assert [q.id for q in kept.questions[:2]] == ["Q0", "Q1"]
