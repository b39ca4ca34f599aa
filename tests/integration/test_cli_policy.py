"""The CLI and the gate policy: `run --baseline` is gated by the baseline's recorded policy,
`compare` leaves out only the metrics defined differently, `--judge` that would judge nothing
is refused."""

import json
from pathlib import Path

from click.testing import CliRunner

from rag_ci.cli import cli

FAKES = Path(__file__).resolve().parents[1] / "fakes"
TARGET = f"""
target:
  kind: python
  entry: tiny_rag:answer
  path: [{FAKES}]
  pass_env: ["TINY_RAG_*"]   # the fake's switches (the target's environment is an allow-list)
"""


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def report_of(output: str) -> dict:
    return json.loads(output[output.index("{") :])


def test_judge_option_with_a_metrics_block_without_judge_metrics_is_refused_with_the_fix(
    tiny_project, tmp_path
):
    config = tiny_project(TARGET + "  generator_family: meta\n", extra_yaml="metrics: {hit_at_k: {k: 5}}\n")
    result = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "out.json",
        "--no-progress",
        "--judge",
        "openai-compatible:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:9/v1",
    )
    assert result.exit_code == 2
    assert "lists no judge metric, so nothing would be judged" in result.output
    assert "faithfulness: {threshold: 0.7}" in result.output and "remove `metrics:`" in result.output
    assert not (tmp_path / "out.json").exists()


def test_run_against_a_baseline_is_gated_by_the_baselines_policy_not_the_edited_config(
    tiny_project, tmp_path
):
    config = tiny_project(TARGET)
    assert invoke("run", "--config", config, "-o", tmp_path / "base.json", "--no-progress").exit_code == 0
    tiny_project(TARGET, extra_yaml="gate: {fail_on: never}\n")  # the "PR" switches its gate off

    pinned = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--format",
        "json",
        "--no-progress",
        env={"TINY_RAG_BROKEN": "1"},
    )
    assert pinned.exit_code == 1
    assert (
        "changes the baseline's gate (not applied; --policy config applies it): gate.fail_on any_regression → never"
        in pinned.output
    )
    assert report_of(pinned.output)["policy_changes"] == ["gate.fail_on any_regression → never"]

    own = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--policy",
        "config",
        "--no-progress",
        env={"TINY_RAG_BROKEN": "1"},
    )
    assert own.exit_code == 0 and "gate disabled" in own.output


def test_compare_leaves_out_only_the_metric_whose_k_changed_and_gates_the_others(tiny_project, tmp_path):
    config = tiny_project(TARGET, extra_yaml="metrics: {hit_at_k: {k: 5}, keyword_coverage: {}}\n")
    assert invoke("run", "--config", config, "-o", tmp_path / "base.json", "--no-progress").exit_code == 0
    tiny_project(TARGET, extra_yaml="metrics: {hit_at_k: {k: 1}, keyword_coverage: {}}\n")
    assert (
        invoke(
            "run",
            "--config",
            config,
            "-o",
            tmp_path / "head.json",
            "--no-progress",
            env={"TINY_RAG_BROKEN": "1"},
        ).exit_code
        == 0
    )

    result = invoke("compare", tmp_path / "base.json", tmp_path / "head.json", "--format", "json")
    assert result.exit_code == 1
    report = report_of(result.output)
    assert [(n["name"], n["differences"]) for n in report["not_comparable"]] == [("hit_at_k", ["k: 5 → 1"])]
    [regression] = report["regressions"]
    assert regression["id"] == "Q2" and [m["name"] for m in regression["metrics"]] == ["keyword_coverage"]
    md = invoke("compare", tmp_path / "base.json", tmp_path / "head.json")
    assert "### Not comparable" in md.output and "k: 5 → 1" in md.output


def test_compare_gates_with_the_baselines_recorded_fail_on_unless_told_otherwise(tiny_project, tmp_path):
    config = tiny_project(TARGET, extra_yaml="gate: {fail_on: never}\n")
    assert invoke("run", "--config", config, "-o", tmp_path / "base.json", "--no-progress").exit_code == 0
    assert (
        invoke(
            "run",
            "--config",
            config,
            "-o",
            tmp_path / "head.json",
            "--no-progress",
            env={"TINY_RAG_BROKEN": "1"},
        ).exit_code
        == 0
    )
    assert invoke("compare", tmp_path / "base.json", tmp_path / "head.json").exit_code == 0
    assert (
        invoke(
            "compare", tmp_path / "base.json", tmp_path / "head.json", "--fail-on", "any_regression"
        ).exit_code
        == 1
    )


def test_run_with_a_corrupt_baseline_exits_2_before_running(tiny_project, tmp_path):
    config = tiny_project(TARGET)
    (tmp_path / "base.json").write_text('{"meta": {"schema_version": 1}, "questions": [')
    result = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--no-progress",
    )
    assert result.exit_code == 2 and "not valid JSON" in result.output
    assert not (tmp_path / "head.json").exists()
