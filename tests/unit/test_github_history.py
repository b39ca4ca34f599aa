"""eval_history.jsonl lines, the trend, and `rag-ci history FILE`."""

from __future__ import annotations

import json

from click.testing import CliRunner

from builders import metric, question, run
from rag_ci.cli.history import history
from rag_ci.core.comparison.history import (
    dump_line,
    history_line,
    lines_of_branch,
    read_history,
    render_trend_text,
    sparkline,
    trend,
)


def entry(pass_rate: float, sha: str, qs_hash: str = "qs", **extra) -> dict:
    return {
        "timestamp": f"2026-01-0{len(sha)}T00:00:00",
        "git_sha": sha,
        "pass_rate": pass_rate,
        "question_set_hash": qs_hash,
        "judge_digest": None,
        "questions": 10,
        "latency_p95_s": 0.5,
        "generator_cost_usd": 0.01,
        "judge_cost_usd": 0.02,
        **extra,
    }


def test_a_history_line_summarises_a_run_on_one_line():
    result = run(
        question("Q1", metrics=[metric("hit_at_k", 1.0)]),
        question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)]),
        sha="abc",
    )
    line = history_line(result, run_url="https://github.example/run/1", event="push")
    assert (
        line["git_sha"] == "abc"
        and line["questions"] == 2
        and line["passed"] == 1
        and line["pass_rate"] == 0.5
    )
    assert line["metrics"] == {"hit_at_k": 0.5} and line["run_url"] == "https://github.example/run/1"
    text = dump_line(line)
    assert "\n" not in text and json.loads(text) == line


def test_unreadable_lines_are_skipped_not_fatal():
    text = (
        dump_line(entry(0.8, "a")) + "\n{broken\n\n" + '{"no": "pass_rate"}\n' + dump_line(entry(0.9, "bb"))
    )
    assert [e["git_sha"] for _, e in read_history(text)[0]] == ["a", "bb"]


def test_trend_gives_deltas_only_between_comparable_points():
    entries = [entry(0.8, "a"), entry(0.9, "bb"), entry(0.5, "ccc", qs_hash="new-set")]
    points = trend(entries, last=10)
    assert [p["delta_pass_rate"] for p in points] == [None, 0.1, None]
    assert [p["comparable"] for p in points] == [True, True, False]
    assert len(trend(entries, last=2)) == 2


def test_sparkline_uses_a_fixed_scale():
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"


def test_history_command_prints_the_trend(tmp_path):
    path = tmp_path / "eval_history.jsonl"
    path.write_text(
        "\n".join(
            dump_line(e) for e in [entry(0.8, "a1"), entry(0.9, "b22"), entry(0.85, "c333", qs_hash="v2")]
        )
    )

    result = CliRunner().invoke(history, [str(path)])

    assert result.exit_code == 0, result.output
    assert "80.0%" in result.output and "+10.0 pt" in result.output and "new set/judge" in result.output
    assert "pass rate: " in result.output
    as_json = CliRunner().invoke(history, [str(path), "--json", "--last", "1"])
    assert [json.loads(line)["git_sha"] for line in as_json.output.splitlines()] == ["c333"]


def test_empty_history_says_how_it_fills():
    assert "No history yet" in render_trend_text([])


def test_history_lines_show_which_branch_had_a_baseline_even_when_they_do_not_parse():
    main_line = dump_line(entry(0.8, "a", git_ref="refs/heads/main"))
    release_line = dump_line(entry(0.9, "b", git_ref="refs/heads/release/1.x"))
    calibration = json.dumps({"kind": "calibration", "metric": "faithfulness"})
    text = "\n".join(
        [
            main_line,
            release_line,
            calibration,
            "{broken",
            '{"no": "pass_rate"}',
            "",
            dump_line(entry(0.7, "c")),
        ]
    )
    # Unreadable lines and lines without git_ref are the default branch's; a calibration record is no run.
    assert lines_of_branch(text, "main", default_branch="main") == 4
    assert lines_of_branch(text, "release/1.x", default_branch="main") == 1
    assert lines_of_branch(text, "other", default_branch="main") == 0
