"""`rag-ci run --judge fake`: a deterministic, offline dry run of the whole DeepEval tier on the example.

Real DeepEval metric classes and rag-ci's judge client; the replies come from the fake
judge's policy in-process. No judge server is started, no API key is set, and every
socket connection is refused for the duration, so a judge call that reached for the
network would fail the metric (and this test).
"""

from __future__ import annotations

import json
import os
import shutil
import socket

import pytest
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli
from rag_ci.core.config import DEFAULT_JUDGE_METRICS

LABEL = "fake judge — its metrics are a dry run, never a gate"


@pytest.fixture
def offline(monkeypatch):
    """No API key in the environment and no network connection from this process."""
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name in ("OPENAI_BASE_URL", "OLLAMA_HOST"):
            monkeypatch.delenv(name)
    attempts: list = []

    def refuse(self, address, *args):
        attempts.append(address)
        raise OSError(f"network is off in this test (connect to {address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


@pytest.fixture
def example(tmp_path):
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".index", "out"))
    return folder


def dry_run(example, output, *extra):
    args = [
        "run",
        "--config",
        str(example / "rag-ci.yml"),
        "--judge",
        "fake",
        "--shard",
        "1/6",
        "--output",
        str(output),
        "--no-progress",
        *extra,
    ]
    result = CliRunner().invoke(cli, args, env={"EXAMPLE_RAG_REGRESSION": ""}, catch_exceptions=False)
    return result, json.loads(output.read_text())


def judge_scores(run: dict) -> dict:
    return {
        q["id"]: {
            n: (m["score"], m["passed"], m["error"]) for n, m in q["metrics"].items() if m["kind"] == "judge"
        }
        for q in run["questions"]
    }


def test_the_fake_judge_scores_all_six_metrics_offline_the_same_every_run_and_says_it_is_a_dry_run(
    example, tmp_path, offline
):
    first, run1 = dry_run(example, tmp_path / "one.json")
    second, run2 = dry_run(example, tmp_path / "two.json", "--no-build")

    assert first.exit_code == 0 and second.exit_code == 0, first.output[-2000:] + second.output[-2000:]
    assert offline == []  # nothing tried to connect
    assert run1["meta"]["judge"]["provider"] == "fake"
    scores = judge_scores(run1)
    assert len(scores) >= 3
    scored = {
        name
        for metrics in scores.values()
        for name, (score, _, error) in metrics.items()
        if score is not None and error is None
    }
    # the six per-question metrics (the conversation-level ones are opt-in)
    assert scored == set(DEFAULT_JUDGE_METRICS)
    assert all(error is None for metrics in scores.values() for (_, _, error) in metrics.values())
    # The policy tells answers apart: not every verdict is the same.
    assert len({passed for metrics in scores.values() for (_, passed, _) in metrics.values()}) == 2
    assert judge_scores(run2) == scores
    # Labelled where it is read: the report printed, and the run's log.
    assert LABEL in first.stdout and LABEL in first.stderr
