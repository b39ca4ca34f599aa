"""`rag-ci audit sample`: a blind, stratified, reproducible sample and its labelling sheet."""

import json

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from builders import metric, question, run
from rag_ci.cli import cli
from rag_ci.core.results import JudgeFingerprint
from rag_ci.core.review.audit import draw_sample, labels_yaml, stratum_of, yaml_quoted
from rag_ci.core.review.audit_page import render_audit_page
from rag_ci.core.review.calibration import parse_label_sheet
from rag_ci.files.results_file import save_results

JUDGE = JudgeFingerprint(
    provider="openai",
    model="gpt-4o-mini-2024-07-18",
    temperature=0.0,
    deepeval_version="3",
    metrics={"correctness": {"threshold": 1.0}, "completeness": {"threshold": 1.0}},
    prompt_hash="p",
)


def judged(qid, corpus, correct, *, answer="ok", verdict=None, complete=True):
    metrics = [
        metric("correctness", 1.0 if correct else 0.0, threshold=1.0, kind="judge"),
        metric("completeness", 1.0 if complete else 0.0, threshold=1.0, kind="judge"),
    ]
    return question(
        qid, verdict or ("pass" if correct else "fail"), corpora=(corpus,), metrics=metrics, answer=answer
    )


def big_run():
    # 40 du2 passes, 10 du2 fails, 30 du3 passes, 5 du3 fails
    qs = (
        [judged(f"A{i:02}", "du2", True) for i in range(40)]
        + [judged(f"B{i:02}", "du2", False) for i in range(10)]
        + [judged(f"C{i:02}", "du3", True) for i in range(30)]
        + [judged(f"D{i:02}", "du3", False) for i in range(5)]
    )
    return run(*qs, judge=JUDGE)


def test_every_corpus_and_verdict_is_sampled_at_the_fraction_rounded_up():
    sample = draw_sample(big_run(), 0.1, seed=3)
    assert {(s.name, s.size, s.picked) for s in sample.strata} == {
        ("du2 × pass", 40, 4),
        ("du2 × fail", 10, 1),
        ("du3 × pass", 30, 3),
        ("du3 × fail", 5, 1),
    }
    by_stratum = {}
    for item in sample.items:
        by_stratum.setdefault(item.stratum, []).append(item.id)
    assert all(i.startswith("D") for i in by_stratum["du3 × fail"])
    assert len(sample.items) == 9


def test_the_same_seed_draws_the_same_sample_and_another_seed_another():
    a, b, c = (draw_sample(big_run(), 0.1, seed=s) for s in (7, 7, 8))
    assert a.ids == b.ids
    assert a.ids != c.ids


def test_regressions_gains_and_unstable_verdicts_are_always_in_the_sample():
    head = big_run()
    head.questions[5].unstable = True
    sample = draw_sample(head, 0.05, seed=1, must_include={"A10": "regression", "C20": "gain"})
    why = {item.id: item.why for item in sample.items}
    assert (why["A10"], why["C20"], why["A05"]) == ("regression", "gain", "unstable")


def test_a_judge_free_run_is_stratified_by_the_questions_verdict():
    q = question("Q", "fail", corpora=("x", "y"))
    assert stratum_of(q, "correctness") == "x+y × fail"


def test_the_sheet_never_shows_the_judges_verdict_or_reason_and_reads_back_as_unlabelled():
    head = big_run()
    head.questions[0].metrics["correctness"].reason = "JUDGE-SECRET-REASON"
    sample = draw_sample(head, 1.0, seed=0)
    text = labels_yaml(head, sample)
    page = render_audit_page(head, sample)
    for shown in (text, page):
        assert "JUDGE-SECRET-REASON" not in shown and "correctness=" not in shown and "threshold" not in shown
    sheet = parse_label_sheet(text, "labels.yml")
    assert sheet.labels == {} and len(sheet.unlabelled) == len(head.questions)
    assert sheet.judge_digest == JUDGE.digest()


@pytest.mark.parametrize(
    "hostile", ["a\nb: c", "\u0085 \u2028 \x9f \x7f \ud800", '"quoted" # not a comment', "</script><b>x</b>"]
)
def test_any_answer_text_survives_the_sheet_as_a_yaml_string(hostile):
    # Read as rag-ci reads a labels sheet (load_yaml: ruamel's pure-Python loader). The C scanner
    # of ruamel.yaml.clib refuses the escape of a lone surrogate ("\ud800") that it reads.
    reader = YAML(typ="safe", pure=True)
    assert reader.load(f"k: {yaml_quoted(hostile)}")["k"] == hostile
    head = run(judged("Q1", "du2", True, answer=hostile), judge=JUDGE)
    loaded = reader.load(labels_yaml(head, draw_sample(head, 1.0, seed=0)))
    assert loaded["labels"][0]["answer"] == hostile


def test_the_page_embeds_untrusted_text_as_inert_json_and_loads_nothing_from_the_network():
    head = run(judged("Q1", "du2", True, answer="</script><script>alert(1)</script><!--"), judge=JUDGE)
    page = render_audit_page(head, draw_sample(head, 1.0, seed=0))
    assert "</script><script>alert" not in page and "<!--" not in page.split("<body>")[1]
    assert "http://" not in page and "https://" not in page and "src=" not in page
    data = page.split('<script type="application/json" id="sample">')[1].split("</script>")[0]
    assert json.loads(data)["entries"][0]["answer"].startswith("</script>")


def test_filled_sheet_labels_both_metrics_and_counts_labellers():
    text = (
        'labeller: "ana"\njudge_digest: "d1"\nlabels:\n'
        "  - {id: A, correct: true, complete: false}\n  - {id: B, correct: false, labeller: bo}\n  - {id: C, correct: }\n"
    )
    sheet = parse_label_sheet(text, "labels.yml")
    assert sheet.labels == {"correctness": {"A": True, "B": False}, "completeness": {"A": False}}
    assert (sheet.labeller_count, sheet.unlabelled, sheet.judge_digest) == (2, ("C",), "d1")


def test_audit_sample_command_writes_the_sheet_and_page_and_lists_the_strata(tmp_path):
    results = tmp_path / "results.json"
    save_results(results, big_run())
    out = tmp_path / "audit"
    first = CliRunner().invoke(
        cli, ["audit", "sample", str(results), "--fraction", "0.1", "--out", str(out), "--seed", "4"]
    )
    assert first.exit_code == 0, first.output
    assert "9 answers" in first.output and "du3 × fail" in first.output
    sheet = (out / "labels.yml").read_text()
    again = CliRunner().invoke(
        cli, ["audit", "sample", str(results), "--out", str(tmp_path / "again"), "--seed", "4"]
    )
    assert again.exit_code == 0 and (tmp_path / "again" / "labels.yml").read_text() == sheet
    assert (out / "audit.html").read_text().count("<script") == 2


def test_audit_sample_with_a_baseline_includes_this_runs_regressions(tmp_path):
    base, head = big_run(), big_run()
    head.questions[3] = judged("A03", "du2", False)
    save_results(tmp_path / "base.json", base)
    save_results(tmp_path / "head.json", head)
    result = CliRunner().invoke(
        cli,
        [
            "audit",
            "sample",
            str(tmp_path / "head.json"),
            "--baseline",
            str(tmp_path / "base.json"),
            "--fraction",
            "0.01",
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert '"A03"' in (tmp_path / "a" / "labels.yml").read_text()
    assert "1 decided by this run" in result.output


def test_the_csv_sheet_reads_back_once_filled_and_formulas_stay_inert(tmp_path):
    import csv
    import io

    head = run(
        judged("=cmd", "du2", True, answer='=HYPERLINK("http://x")'), judged("B", "du3", False), judge=JUDGE
    )
    results = tmp_path / "results.json"
    save_results(results, head)
    done = CliRunner().invoke(
        cli, ["audit", "sample", str(results), "--fraction", "1", "--out", str(tmp_path), "--sheet", "csv"]
    )
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(io.StringIO((tmp_path / "labels.csv").read_text())))
    # no judge reason
    assert {r["answer"] for r in rows} >= {'\'=HYPERLINK("http://x")'} and "correctness=" not in str(rows)
    for r in rows:  # the labeller fills the blank columns in a spreadsheet
        r["correct"], r["complete"] = "true", "false"
    filled = io.StringIO()
    writer = csv.DictWriter(filled, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    sheet = parse_label_sheet(filled.getvalue(), "labels.csv")
    assert sheet.labels == {
        "correctness": {"=cmd": True, "B": True},
        "completeness": {"=cmd": False, "B": False},
    }
