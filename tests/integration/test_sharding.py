"""`rag-ci run --shard i/n` + `rag-ci merge` give the same results.json as one unsharded run."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from rag_ci.cli import cli

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PYTHON_TARGET = f"""
target:
  kind: python
  entry: tiny_rag:answer
  path: [{FAKES}]
  concurrency: 4
# The mix below crashes on purpose; a small shard of it would otherwise count as a broken run.
gate: {{max_error_rate: 0.5}}
"""


def many_questions(count: int = 30) -> str:
    """A deterministic mix: passing, cross-corpus, refusal, routing leak, crash, wrong keywords."""
    lines = ["version: 2", "questions:"]
    for i in range(count):
        kind = i % 6
        if kind == 0:
            lines.append(
                f"  - {{id: Q{i:02d}, question: What is the delay?, doc_id: a, sources: [a/x.md], keywords: ['10 ms']}}"
            )
        elif kind == 1:
            lines.append(
                f"  - {{id: Q{i:02d}, question: Delay on b?, doc_id: b, sources: [b/y.md], keywords: ['20 ms'], tags: [lin]}}"
            )
        elif kind == 2:
            lines.append(
                f"  - {{id: Q{i:02d}, question: compare both, doc_id: [a, b], sources: [a/x.md, b/y.md], tags: [cross]}}"
            )
        elif kind == 3:
            lines.append(
                f"  - {{id: Q{i:02d}, question: Who is the CEO?, expect: refusal, tags: [out_of_scope]}}"
            )
        elif kind == 4:
            lines.append(f"  - {{id: Q{i:02d}, question: leak please, doc_id: a, sources: [a/x.md]}}")
        else:
            lines.append(
                f"  - {{id: Q{i:02d}, question: crash {i}, doc_id: b}}"
                if i % 12 == 5
                else f"  - {{id: Q{i:02d}, question: Delay on b?, doc_id: b, sources: [b/y.md], keywords: ['99 ms']}}"
            )
    return "\n".join(lines) + "\n"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def content(path: Path) -> dict:
    """results.json without what differs between any two runs: timestamps, measured latencies
    (the warm-ups' too: each shard warms its own target up) and each question's fresh trace."""
    data = json.loads(path.read_text())
    for key in ("started_at", "finished_at", "diagnostics", "warmup_latency_s"):
        data["meta"].pop(key)
    for key in ("latency_p50_s", "latency_p95_s"):
        data["aggregates"].pop(key)
    for record in data["questions"]:
        record.pop("latency_s")
        record.pop("trace_id")
        record["request"].pop("traceparent")
    return data


def ran_as_expected(result, output) -> bool:
    """A run of the mix exits 1 exactly when its questions leaked (a leak gates, baseline or
    not), 0 otherwise; its results.json is written either way."""
    leaked = any(q["verdict"] == "routing_error" for q in json.loads(output.read_text())["questions"])
    return result.exit_code == (1 if leaked else 0)


def test_three_shards_merge_into_the_unsharded_results(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET, many_questions())
    full = invoke("run", "--config", config, "-o", tmp_path / "full.json", "--no-progress")
    assert full.exit_code == 1 and ran_as_expected(full, tmp_path / "full.json")

    sizes = []
    for i in (1, 2, 3):
        shard_file = tmp_path / f"shard-{i}.json"
        assert ran_as_expected(
            invoke("run", "--config", config, "--shard", f"{i}/3", "-o", shard_file, "--no-progress"),
            shard_file,
        )
        data = json.loads(shard_file.read_text())
        assert data["meta"]["shard"] == f"{i}/3"
        assert data["meta"]["question_ids"] == [f"Q{n:02d}" for n in range(30)]
        sizes.append(len(data["questions"]))
    assert sum(sizes) == 30 and all(sizes), sizes  # a real split: every shard has work, none is lost

    # The shard files in any order, as a shell glob would list them.
    files = [tmp_path / "shard-3.json", tmp_path / "shard-1.json", tmp_path / "shard-2.json"]
    result = invoke("merge", *files, "-o", tmp_path / "merged.json")
    assert result.exit_code == 0, result.output
    assert "merged 3 shards: 30 questions" in result.output

    merged, full = content(tmp_path / "merged.json"), content(tmp_path / "full.json")
    assert [q["id"] for q in merged["questions"]] == [f"Q{n:02d}" for n in range(30)]
    assert {q["verdict"] for q in full["questions"]} == {"pass", "fail", "error", "routing_error"}
    assert merged == full

    # The merged file is an ordinary results.json: compare accepts it against the unsharded run
    # and finds nothing changed; the run's routing leaks fail the gate, as leaks always do.
    compared = invoke("compare", tmp_path / "full.json", tmp_path / "merged.json", "--format", "json")
    report = json.loads(compared.output[compared.output.index("{") :])
    assert report["regressions"] == report["worse"] == report["gains"] == report["changed"] == []
    assert report["leaks"] and {c["new_verdict"] for c in report["leaks"]} == {"routing_error"}
    assert compared.exit_code == 1


def test_merge_refuses_an_incomplete_set_with_exit_code_2(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET, many_questions(12))
    for i in (1, 2):
        shard_file = tmp_path / f"shard-{i}.json"
        assert ran_as_expected(
            invoke("run", "--config", config, "--shard", f"{i}/3", "-o", shard_file, "--no-progress"),
            shard_file,
        )
    result = invoke(
        "merge", tmp_path / "shard-1.json", tmp_path / "shard-2.json", "-o", tmp_path / "merged.json"
    )
    assert result.exit_code == 2
    assert "shard 3/3 missing" in result.output
    assert not (tmp_path / "merged.json").exists()
    missing = invoke("merge", tmp_path / "nope.json")
    assert missing.exit_code == 2 and "shard not found" in missing.output


def test_a_shard_is_compared_with_its_part_of_the_whole_baseline(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET, many_questions())
    # its leaks
    assert invoke("run", "--config", config, "-o", tmp_path / "whole.json", "--no-progress").exit_code == 1
    result = invoke(
        "run",
        "--config",
        config,
        "--shard",
        "2/3",
        "-o",
        tmp_path / "s2.json",
        "--baseline",
        tmp_path / "whole.json",
        "--format",
        "json",
        "--no-progress",
    )
    report = json.loads(result.output[result.output.index("{") :])
    assert report["removed"] == [] and report["new"] == [] and report["regressions"] == report["worse"] == []
    assert result.exit_code == 1 and report["leaks"]  # the mix's routing leaks: a leak always gates
