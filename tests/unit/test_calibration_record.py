"""Calibration remembered: `calibrate --record` appends a record; the report states it."""

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from click.testing import CliRunner

from builders import metric, question, run
from rag_ci.cli import cli
from rag_ci.core.comparison.history import calibration_line, dump_line, parse_calibrations, read_history
from rag_ci.core.results import JudgeFingerprint
from rag_ci.core.review.calibration_status import calibration_statuses, uncalibrated_reason
from rag_ci.files.results_file import save_results

JUDGE = JudgeFingerprint(
    provider="openai",
    model="gpt-4o-mini-2024-07-18",
    temperature=0.0,
    deepeval_version="3",
    metrics={"correctness": {"threshold": 1.0}},
    prompt_hash="p",
)
OTHER_JUDGE = JUDGE.model_copy(update={"model": "gpt-4o-2024-08-06"})


def judged_run(verdicts, judge=JUDGE):
    return run(
        *[
            question(qid, metrics=[metric("correctness", 1.0 if ok else 0.0, threshold=1.0, kind="judge")])
            for qid, ok in verdicts.items()
        ],
        judge=judge,
    )


def record(kappa=0.82, day="2026-11-02", digest=None, n=48, metric_name="correctness"):
    return calibration_line(
        judge_digest=digest or JUDGE.digest(),
        judge="openai:x",
        metric=metric_name,
        n=n,
        agreement=0.9,
        kappa=kappa,
        date=day,
        labellers=1,
    )


def status(records, today=date(2026, 11, 30), run_=None):
    return calibration_statuses(
        run_ or judged_run({"A": True}), records, today, max_age_days=90, min_kappa=0.6
    )


def test_a_calibrated_judge_is_stated_with_labels_kappa_and_date():
    [s] = status([record()])
    assert s.ok and s.text == "correctness judge calibrated on 48 labels, kappa 0.82 (2026-11-02)"


@pytest.mark.parametrize(
    "records, state, words",
    [
        ([], "none", "not calibrated"),
        ([record(digest=OTHER_JUDGE.digest())], "none", "not calibrated"),
        ([record(day="2026-01-02")], "stale", "older than 90 days"),
        ([record(kappa=0.41)], "low_kappa", "below the minimum kappa 0.60"),
        ([record(kappa=None)], "low_kappa", "kappa n/a"),
    ],
)
def test_a_missing_stale_or_weak_calibration_is_a_warning(records, state, words):
    [s] = status(records)
    assert s.state == state and words in s.text and not s.ok
    assert uncalibrated_reason([s]) == s.text


def test_the_latest_record_of_this_judge_decides():
    [s] = status([record(kappa=0.3, day="2026-10-01"), record(kappa=0.9, day="2026-11-20")])
    assert s.ok and "kappa 0.90" in s.text


def test_a_judge_free_run_has_no_calibration_line():
    assert status([record()], run_=run(question("A"))) == []


def test_calibration_records_are_not_history_points_and_history_lines_are_not_records():
    text = dump_line(record()) + "\n" + json.dumps({"pass_rate": 0.5, "schema": 1}) + "\nnot json\n"
    assert [e["pass_rate"] for _, e in read_history(text)[0]] == [0.5]
    assert [r["kappa"] for r in parse_calibrations(text)] == [0.82]


def test_calibrate_record_appends_one_line_per_labelled_metric(tmp_path):
    results = tmp_path / "results.json"
    save_results(results, judged_run({"A": True, "B": False, "C": True, "D": False}))
    labels = tmp_path / "labels.yml"
    labels.write_text(
        'labeller: "ana"\nlabels:\n  - {id: A, correct: true}\n  - {id: B, correct: false}\n'
        "  - {id: C, correct: false}\n  - {id: D, correct: false}\n  - {id: E, correct: }\n"
    )
    history = tmp_path / "eval_history.jsonl"
    history.write_text('{"pass_rate": 1.0}')  # no trailing newline: the record must start on its own line
    result = CliRunner().invoke(
        cli, ["calibrate", str(labels), str(results), "--record", "--history", str(history)]
    )
    assert result.exit_code == 0, result.output
    assert "Disagreements (1)" in result.output and "correctness=1.0" in result.output  # the judge's reason
    [rec] = parse_calibrations(history.read_text())
    assert (rec["metric"], rec["n"], rec["agreement"], rec["labellers"], rec["judge_digest"]) == (
        "correctness",
        4,
        0.75,
        1,
        JUDGE.digest(),
    )
    assert rec["kappa"] == pytest.approx(0.5)
    assert rec["date"] in {
        datetime.now(UTC).date().isoformat(),
        (datetime.now(UTC) - timedelta(minutes=1)).date().isoformat(),
    }
    assert len(read_history(history.read_text())[0]) == 1


def test_record_without_history_or_without_a_judge_is_refused_with_exit_2(tmp_path):
    results = tmp_path / "results.json"
    save_results(results, run(question("A")))
    labels = tmp_path / "labels.yml"
    labels.write_text("A: true\n")
    assert CliRunner().invoke(cli, ["calibrate", str(labels), str(results), "--record"]).exit_code == 2
    refused = CliRunner().invoke(
        cli, ["calibrate", str(labels), str(results), "--record", "--history", str(tmp_path / "h")]
    )
    assert refused.exit_code == 2 and "no judge" in refused.output


def test_calibrate_compares_each_labelled_metric(tmp_path):
    judge = JUDGE.model_copy(update={"metrics": {"correctness": {}, "completeness": {}}})
    results = tmp_path / "results.json"
    save_results(
        results,
        run(
            question(
                "A",
                metrics=[metric("correctness", 1.0, 1.0, "judge"), metric("completeness", 0.0, 1.0, "judge")],
            ),
            judge=judge,
        ),
    )
    labels = tmp_path / "labels.yml"
    labels.write_text("labels:\n  - {id: A, correct: true, complete: true}\n")
    out = CliRunner().invoke(cli, ["calibrate", str(labels), str(results), "--json"])
    assert out.exit_code == 0, out.output
    assert {(r["metric"], r["both_correct"], r["human_only"]) for r in json.loads(out.output)} == {
        ("correctness", 1, 0),
        ("completeness", 0, 1),
    }
