"""End to end: the action reads the accepted file from the pull request on purpose, lists the
acceptances at the top of the comment, and shows the trend of main from the data branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from action_harness import MERGE_BASE_SHA, copy_example_repository, pull_request_event, run_action

from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow


def test_a_pr_whose_accepted_file_lists_every_regression_passes_and_says_so_first(
    fake, tmp_path: Path, token, baseline_json
):
    workspace = copy_example_repository(tmp_path / "workspace")
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    history = [
        {
            "timestamp": f"2026-01-0{i + 1}T00:00:00",
            "git_sha": f"{i}" * 7,
            "pass_rate": 0.9,
            "metrics": {"hit_at_k": 0.95},
            "latency_p95_s": 0.004,
            "generator_cost_usd": 0.001,
            "judge_cost_usd": 0.0,
            "question_set_hash": "x",
        }
        for i in range(4)
    ]
    fake.branches["rag-ci-data"] = {
        "eval_history.jsonl": "".join(json.dumps(h) + "\n" for h in history).encode()
    }
    first = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )
    assert first.returncode == 1, first.log
    regressed = json.loads((workspace / "rag-ci-output" / "comparison.json").read_text())["regressions"]
    (workspace / "accepted.yml").write_text(
        "accepted:\n"
        + "".join(
            f"  - id: {r['id']}\n    question_hash: {r['question_hash']}\n    reason: chunker change reviewed by @release\n"
            for r in regressed
        )
    )

    second = run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert second.returncode == 0, second.log
    body = next(c for c in fake.comments[7] if COMMENT_MARKER in c["body"])["body"]
    lines = body.splitlines()
    assert lines[1] == f"## rag-ci: ✅ no regression · {len(regressed)} accepted"
    assert lines[3].startswith("**Compared:** baseline [`2222222`]")  # what was compared comes first
    assert lines[5] == f"### ✋ Accepted regressions ({len(regressed)})"
    assert (
        all(f"| {r['id']} |" in body for r in regressed) and "&#64;release" in body and "@release" not in body
    )
    assert "**Trend on main** (last 4 runs since 2026-01-01)" in body
