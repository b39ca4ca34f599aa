"""`rag-ci calibrate`: agreement and Cohen's kappa against hand-computed figures."""

import json

import pytest
from click.testing import CliRunner

from builders import metric, question, run
from rag_ci.cli.calibrate import calibrate as calibrate_command
from rag_ci.core.review.calibration import calibrate, cohen_kappa, parse_label_sheet, render_calibration
from rag_ci.errors import ValidationError
from rag_ci.files.results_file import save_results

# 10 questions: both correct 4, both wrong 3, human-only correct 2, judge-only correct 1.
HUMAN = {f"Q{i}": v for i, v in enumerate([True] * 4 + [False] * 3 + [True] * 2 + [False])}
JUDGE = {f"Q{i}": v for i, v in enumerate([True] * 4 + [False] * 3 + [False] * 2 + [True])}


def judged_run(extra=()):
    questions = [
        question(qid, metrics=[metric("correctness", 1.0 if ok else 0.0, threshold=1.0, kind="judge")])
        for qid, ok in JUDGE.items()
    ]
    return run(*questions, *extra)


def test_kappa_matches_the_hand_computed_value():
    # observed 7/10; chance = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    pairs = [(HUMAN[q], JUDGE[q]) for q in HUMAN]
    assert cohen_kappa(pairs) == pytest.approx(0.4)


def test_kappa_is_zero_for_a_judge_that_always_says_correct_and_undefined_for_one_class():
    assert cohen_kappa([(True, True)] * 8 + [(False, True)] * 2) == pytest.approx(0.0)
    assert cohen_kappa([(True, True)] * 5) is None
    assert cohen_kappa([]) is None


def test_report_counts_agreement_and_lists_disagreements_with_the_judges_reason():
    report = calibrate(HUMAN, judged_run())
    assert (report.both_correct, report.both_wrong, report.human_only, report.judge_only) == (4, 3, 2, 1)
    assert report.agreement == pytest.approx(0.7)
    assert report.kappa == pytest.approx(0.4)
    assert [d.id for d in report.disagreements] == ["Q7", "Q8", "Q9"]
    assert report.disagreements[0].reason == "correctness=0.0"
    text = render_calibration(report)
    assert "70.0%" in text and "0.400" in text and "Q9" in text
    # The measured disagreement, as the judge-noise rule's p to put in rag-ci.yml.
    assert "`judge: {disagreement_rate: 0.300}`" in text


def test_missing_and_unjudged_questions_are_reported_not_counted():
    errored = question("QE", metrics=[])
    report = calibrate({**HUMAN, "QX": True, "QE": False}, judged_run([errored]))
    assert report.n == 10
    assert report.missing == ("QX",)
    assert report.unjudged == ("QE",)


def parse_labels(text, filename):
    """The `correct` labels of a sheet, as the calibration reads them."""
    return dict(parse_label_sheet(text, filename).labels.get("correctness", {}))


def test_labels_from_yaml_mapping_list_and_csv():
    assert parse_labels("A: true\nB: no\n", "l.yml") == {"A": True, "B": False}
    assert parse_labels("labels:\n  - {id: A, correct: false}\n  - {id: B, correct: 1}\n", "l.yaml") == {
        "A": False,
        "B": True,
    }
    assert parse_labels("A:\n  correct: yes\n", "l.yml") == {"A": True}
    assert parse_labels("id,correct,note\nA,TRUE,x\nB,false,y\n", "l.csv") == {"A": True, "B": False}


def test_bad_labels_name_file_and_line():
    with pytest.raises(ValidationError, match=r"l.yml:2: B: expected true/false"):
        parse_labels("A: true\nB: maybe\n", "l.yml")
    with pytest.raises(ValidationError, match="`id` and `correct` columns"):
        parse_labels("question,label\nA,1\n", "l.csv")


def test_cli_prints_figures_and_fails_below_min_kappa(tmp_path):
    labels = tmp_path / "labels.yml"
    labels.write_text("".join(f"{k}: {str(v).lower()}\n" for k, v in HUMAN.items()))
    results = tmp_path / "results.json"
    save_results(results, judged_run())
    runner = CliRunner()
    out = runner.invoke(calibrate_command, [str(labels), str(results)])
    assert out.exit_code == 0, out.output
    assert "Cohen's kappa  0.400" in out.output
    as_json = runner.invoke(calibrate_command, [str(labels), str(results), "--json"])
    assert json.loads(as_json.output)["kappa"] == pytest.approx(0.4)
    strict = runner.invoke(calibrate_command, [str(labels), str(results), "--min-kappa", "0.6"])
    assert strict.exit_code == 1
