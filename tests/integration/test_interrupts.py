"""An interrupted run is not a regression: Ctrl-C (SIGINT) and a cancelled
job's SIGTERM end `rag-ci run` with 130 / 143, one line saying to resume with --resume,
no traceback, and a journal that --resume continues; a python target that signals rag-ci
does the same. Before: click's "Aborted!" and exit 1, which means "regression"."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
FAKES = Path(__file__).resolve().parents[1] / "fakes"
QUESTIONS = "version: 1\nquestions:\n" + "".join(
    f"  - {{id: Q{i:02d}, question: What is the delay?, doc_id: a}}\n" for i in range(12)
)


def cli_run(config: Path, output: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "rag_ci.cli",
        "run",
        "--config",
        str(config),
        "-o",
        str(output),
        "--no-progress",
        *extra,
    ]


def wait_for_journal(journal: Path, lines: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"{journal} never reached {lines} lines")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupted_run_exits_128_plus_the_signal_says_resume_and_resumes(
    tiny_project, tmp_path, sig, code
):
    config = tiny_project(
        f"target: {{kind: command, command: [python, {FAKES / 'tiny_rag.py'}], pass_env: ['TINY_RAG_*'], concurrency: 1}}\n",
        QUESTIONS,
    )
    output, log = tmp_path / "r.json", tmp_path / "asked.log"
    env = {**os.environ, "TINY_RAG_LOG": str(log)}
    # The target stalls after a warm-up and three questions: the run is still going when the
    # signal comes, however slowly this test watches it.
    process = subprocess.Popen(
        cli_run(config, output),
        env={**env, "TINY_RAG_STALL_AFTER": "4"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = tmp_path / "r.json.partial.jsonl"
    wait_for_journal(journal, 3)  # the header and two finished questions
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)  # a hang guard only
    assert process.returncode == code, stderr
    assert f"interrupted by {sig.name}" in stderr and "--resume" in stderr
    assert "Traceback" not in stderr and "Aborted!" not in stderr, stderr
    assert not output.exists()
    finished = len(journal.read_text().splitlines()) - 1
    assert 2 <= finished <= 3

    log.write_text("")
    resumed = subprocess.run(
        cli_run(config, output, "--resume"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resume: {finished} questions already done" in resumed.stderr
    # unscored warm-ups aside
    asked = [qid for qid in log.read_text().split() if not qid.startswith("rag-ci-warmup-")]
    assert len(asked) == 12 - finished
    assert len(json.loads(output.read_text())["questions"]) == 12


def test_a_python_target_that_signals_rag_ci_interrupts_the_run_instead_of_failing_the_gate(
    tiny_project, tmp_path
):
    config = tiny_project(
        f"target: {{kind: python, entry: 'hostile_python_rag:answer', path: [{FAKES}], env: {{HOSTILE_PYTHON_RAG: signal}}}}\n",
        QUESTIONS,
    )
    done = subprocess.run(
        cli_run(config, tmp_path / "r.json"),
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 143, done.stderr
    assert "interrupted by SIGTERM" in done.stderr and "Traceback" not in done.stderr, done.stderr
