"""Latency budgets that hold on noise: unchanged re-runs of a RAG with a cold
start never breach `latency_p95: "+20%"`, a real 2× slowdown always does.

The RAG is tests/fakes/cold_rag.py, a real HTTP server that loads its "model" on the first
request (1.5–3.1 s, drawn per run) and then answers each question in its own typical time
times a per-run lognormal noise. Before warm-ups and the bootstrap, p95 of 30 questions at
concurrency 4 was the cold first batch, and unchanged re-runs breached the budget.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import free_port, write
from rag_ci.cli import cli

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def _project(tmp_path: Path, port: int, questions: int = 30) -> Path:
    lines = ["version: 1", "questions:"]
    for i in range(questions):
        corpus = "ab"[i % 2]
        lines += [
            f"  - id: Q{i:02d}",
            f"    question: What is the delay, question {i}?",
            f"    doc_id: {corpus}",
        ]
    write(tmp_path / "questions.yml", "\n".join(lines) + "\n")
    return write(
        tmp_path / "rag-ci.yml",
        f"""
        questions: questions.yml
        corpora: {{a: {{description: A}}, b: {{description: B}}}}
        metrics: {{hit_at_k: {{k: 5}}}}
        target:
          kind: http
          url: http://127.0.0.1:{port}/query
          health: /health
          start: [{sys.executable}, {FAKES / "cold_rag.py"}, '{port}']
          pass_env: ["COLD_RAG_*"]
          concurrency: 4
          timeout_s: 20
        gate:
          budgets: {{latency_p95: "+20%", latency_p50: "+20%"}}
    """,
    )


def _run(config: Path, output: Path, *, seed: int, slowdown: float = 1.0, baseline: Path | None = None):
    args = ["run", "--config", str(config), "-o", str(output), "--no-progress"]
    if baseline is not None:
        args += ["--baseline", str(baseline), "--format", "json"]
    env = {"COLD_RAG_SEED": str(seed), "COLD_RAG_SLOWDOWN": str(slowdown)}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    budgets = (
        json.loads(result.output[result.output.index("{") :])["budgets"] if baseline is not None else None
    )
    return result, budgets


def test_unchanged_reruns_of_a_cold_starting_rag_never_breach_and_a_2x_slowdown_always_does(tmp_path):
    config = _project(tmp_path, free_port())
    # Seeds chosen for their cold starts (cold_rag.py): 1.7 s on the baseline, 3.0, 2.5 and 2.8 s
    # on the re-runs, as in the issue (1.50–3.09 s): before warm-ups, p95 was that cold batch.
    base, _ = _run(config, tmp_path / "base.json", seed=1)
    assert base.exit_code == 0, base.output
    meta = json.loads((tmp_path / "base.json").read_text())["meta"]
    # the cold start, unscored
    assert len(meta["warmup_latency_s"]) == 4 and max(meta["warmup_latency_s"]) > 1.4

    for seed in (2, 5, 6):
        result, budgets = _run(
            config, tmp_path / f"head{seed}.json", seed=seed, baseline=tmp_path / "base.json"
        )
        assert result.exit_code == 0, f"unchanged re-run {seed} breached: {budgets}"
        assert not any(b["breached"] for b in budgets)

    result, budgets = _run(
        config, tmp_path / "slow.json", seed=7, slowdown=2, baseline=tmp_path / "base.json"
    )
    assert result.exit_code == 1, budgets
    breached = {b["name"]: b for b in budgets if b["breached"]}
    assert set(breached) == {"latency_p95", "latency_p50"}
    p95 = breached["latency_p95"]
    assert p95["bound"] > p95["allowed"]  # above the limit with 95 % confidence, not by one lucky draw
