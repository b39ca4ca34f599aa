"""The report commands: exit codes as their --help says, --accepted, --history, history append."""

import json

from click.testing import CliRunner

from builders import metric, question, run
from rag_ci.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _files(tmp_path):
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), question("B"))
    head = run(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), question("B"), sha="def")
    (tmp_path / "base.json").write_text(base.model_dump_json())
    (tmp_path / "head.json").write_text(head.model_dump_json())
    return tmp_path / "base.json", tmp_path / "head.json"


def test_report_with_a_baseline_exits_1_on_a_regression_like_its_help_says(tmp_path):
    base, head = _files(tmp_path)
    assert "1  the gate fails" in invoke("report", "--help").output
    result = invoke("report", head, "--baseline", base)
    assert result.exit_code == 1 and "❌ 1 regression" in result.output
    assert invoke("report", head).exit_code == 0
    assert invoke("report", base, "--baseline", base).exit_code == 0


def test_report_of_a_broken_run_prints_it_and_exits_2(tmp_path):
    _, head = _files(tmp_path)
    data = json.loads(head.read_text())
    data["meta"]["broken"] = "2/2 questions errored"
    head.write_text(json.dumps(data))
    result = invoke("report", head)
    assert result.exit_code == 2 and "broken run" in result.output


def test_compare_with_an_accepted_file_passes_and_lists_the_acceptance(tmp_path):
    base, head = _files(tmp_path)
    accepted = tmp_path / "accepted.yml"
    accepted.write_text("accepted:\n  - id: A\n    question_hash: hA\n    reason: retriever swap, reviewed\n")
    result = invoke("compare", base, head, "--accepted", accepted)
    assert result.exit_code == 0, result.output
    assert "✅ no regression · 1 accepted" in result.output and "retriever swap, reviewed" in result.output
    accepted.write_text("accepted:\n  - id: A\n    reason: no hash\n")
    bad = invoke("compare", base, head, "--accepted", accepted)
    assert bad.exit_code == 2 and f"{accepted}:2: missing question_hash" in bad.output
    assert invoke("compare", base, head, "--accepted", tmp_path / "nope.yml").exit_code == 2


def test_history_append_writes_the_actions_line_and_compare_report_show_the_trend(tmp_path):
    base, head = _files(tmp_path)
    history = tmp_path / "eval_history.jsonl"
    for _ in range(3):
        assert invoke("history", "append", base, "--history", history).exit_code == 0
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    assert (
        len(lines) == 3
        and lines[0]["pass_rate"] == 1.0
        and lines[0]["git_sha"] == "abc"
        and lines[0]["corpora"] == {"a": 1.0}
    )
    assert "3 runs" not in invoke("history", history).output and "100.0%" in invoke("history", history).output
    md = invoke("compare", base, head, "--history", history)
    assert md.exit_code == 1 and "**Trend on main** (last 3 runs since 2026-01-01)" in md.output
    html = invoke("report", head, "--history", history, "--format", "html")
    assert html.exit_code == 0 and ">pass rate</text>" in html.output


def test_history_append_refuses_a_broken_run(tmp_path):
    _, head = _files(tmp_path)
    data = json.loads(head.read_text())
    data["meta"]["broken"] = "all errored"
    head.write_text(json.dumps(data))
    result = invoke("history", "append", head, "--history", tmp_path / "h.jsonl")
    assert (
        result.exit_code == 2
        and "never a history line" in result.output
        and not (tmp_path / "h.jsonl").exists()
    )


def test_report_html_to_a_file_is_written_as_rendered_never_held_whole(tmp_path, monkeypatch):
    """`report --format html` of two 50k runs peaked at 1.06 GiB, ~190 MiB of it the
    page held whole (as Jinja's pieces, then joined). Written piece by piece, rendering adds
    a fraction of the page to what the loaded runs already hold, not several times it."""
    import tracemalloc

    import rag_ci.cli.compare as compare_cli
    from rag_ci.core.reporting.render import render_html
    from rag_ci.files.results_file import save_results

    said = " ".join(f"word{i}" for i in range(200))  # long answers: the page, not the chart, is the size
    base = run(
        *[
            question(f"q{i:04d}", metrics=[metric("hit_at_k", 1.0, 1.0)], answer=f"{i} base {said}")
            for i in range(500)
        ]
    )
    head = run(
        *[
            question(f"q{i:04d}", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)], answer=f"{i} head {said}")
            for i in range(500)
        ],
        sha="def",
    )
    save_results(tmp_path / "base.json", base)
    save_results(tmp_path / "head.json", head)
    render_html(head)  # the template compiled once, as in any process that renders twice: not the page's cost

    compared = compare_cli.compare_runs
    held_before_rendering = []

    def compare_then_measure_from_here(*args, **kwargs):
        outcome = compared(*args, **kwargs)
        held_before_rendering.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.reset_peak()
        return outcome

    monkeypatch.setattr(compare_cli, "compare_runs", compare_then_measure_from_here)
    tracemalloc.start()
    try:
        result = invoke(
            "report",
            tmp_path / "head.json",
            "--baseline",
            tmp_path / "base.json",
            "--format",
            "html",
            "-o",
            tmp_path / "report.html",
        )
        rendering = tracemalloc.get_traced_memory()[1] - held_before_rendering[0]
    finally:
        tracemalloc.stop()
    page = (tmp_path / "report.html").stat().st_size
    assert result.exit_code == 1 and page > 500_000
    assert "q0499" in (tmp_path / "report.html").read_text()
    assert rendering < page / 2, f"rendering held {rendering:,} bytes for a page of {page:,}"
