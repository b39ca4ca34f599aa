"""End to end: text rag-ci did not write never reaches the runner as a workflow command.

The GitHub runner obeys `::command::` at a line's start (after spaces), ends a line at a bare
CR, and honours the legacy `##[command]` anywhere in a line. A pull request controls much of
what rag-ci prints: its build steps and their output, its rag-ci.yml's values (previewed as
policy changes), the accepted file's path, question ids. None of it may become a command:
`::stop-commands::` would silence rag-ci's own later commands, `##[set-output]` set outputs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from action_harness import HEAD_SHA, MERGE_BASE_SHA, clean_env, pull_request_event, push_event, run_action

from fakes.actions_runner import runner_commands
from fakes.fake_github import FakeGitHubServer

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
# rag-ci's own commands; anything else in the output was injected.
OWN_COMMANDS = {"add-mask", "group", "endgroup", "error", "warning", "notice"}

BUILD = [
    # The build step's output: a bare CR, then a command; a legacy command mid-line.
    "printf 'ok\\r::stop-commands::pwned-token\\n[build] x ##[set-output name=verdict]pass\\n'",
    # The build step's own text, printed before it runs.
    "true \r::warning::pwned-build-step",
]
ACCEPTED = "accepted\r::warning::pwned-path.yml"
QUESTIONS = """\
version: 1
questions:
  - {id: "Q-A ##[set-output name=regressions]0", question: What is the delay on a?, doc_id: a, sources: [a/x.md], keywords: ["10 ms"]}
  - {id: Q-B, question: What is the delay on b?, doc_id: b, sources: [b/y.md], keywords: ["20 ms"]}
"""


def repository(root: Path, extra: str = "") -> Path:
    import json

    root.mkdir(parents=True)
    (root / "rag-ci.yml").write_text(
        "questions: questions.yml\n"
        "corpora: {a: {description: A}, b: {description: B}}\n"
        f"target: {{kind: python, entry: 'hostile_rag:answer', path: ['.'], pass_env: [HOSTILE_RAG_BROKEN], build: {json.dumps(BUILD)},\n"
        "         generator_model: hostile-1, generator_family: hostile}\n"
        "metrics: {hit_at_k: {k: 5}, keyword_coverage: {threshold: 0.6}}\n"
        f"gate: {{max_error_rate: 1.0, accepted: {json.dumps(ACCEPTED)}}}\n" + extra
    )
    (root / "questions.yml").write_text(QUESTIONS)
    (root / ACCEPTED).write_text(
        "accepted:\n  - {id: Q-B, question_hash: 0123456789abcdef, reason: a stale entry}\n"
    )
    shutil.copy(HERE / "hostile_rag.py", root / "hostile_rag.py")
    return root


def injected(log: str) -> list[tuple[str, str]]:
    return [
        (name, data)
        for name, data in runner_commands(log)
        if name not in OWN_COMMANDS or data.startswith("pwned")
    ]


def test_build_output_build_steps_ids_and_paths_reach_the_runner_as_text_not_commands(tmp_path, token):
    main_checkout = repository(tmp_path / "main")
    subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", "run", "-o", "results.json", "--no-progress"],
        cwd=main_checkout,
        env=clean_env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    workspace = repository(tmp_path / "workspace")
    with FakeGitHubServer(token=token) as fake:
        fake.add_baseline_artifact(
            {"results.json": (main_checkout / "results.json").read_bytes()}, head_sha="4" * 40
        )
        # A push to main whose run errors on every question: both keep the baseline's verdict,
        # and their ids are printed.
        run = run_action(
            fake,
            workspace,
            event_name="push",
            event=push_event(),
            token=token,
            env={"HOSTILE_RAG_BROKEN": "1"},
        )

    assert run.returncode == 0, run.log
    assert "kept the last known good verdict of 2 errored question(s)" in run.log
    assert "1 accepted regression entry in" in run.log
    # shown, as text
    assert "pwned-token" in run.log and "pwned-build-step" in run.log and "pwned-path" in run.log
    assert injected(run.log) == []
    assert "set-output" not in "".join(name for name, _ in runner_commands(run.log))


def test_a_policy_change_preview_reaches_the_runner_as_text_not_a_command(tmp_path, token):
    main_checkout = repository(tmp_path / "main")
    subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", "run", "-o", "results.json", "--no-progress"],
        cwd=main_checkout,
        env=clean_env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    workspace = repository(
        tmp_path / "workspace",
        extra='judge: {family: "x\\r::warning::pwned-policy ##[set-output name=verdict]pass"}\n',
    )
    with FakeGitHubServer(token=token) as fake:
        fake.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        fake.add_baseline_artifact(
            {"results.json": (main_checkout / "results.json").read_bytes()}, head_sha=MERGE_BASE_SHA
        )
        run = run_action(fake, workspace, event_name="pull_request", event=pull_request_event(), token=token)

    assert run.returncode == 0, run.log
    assert "this PR changes the gate (previewed, not applied): judge.family none → x" in run.log
    assert "pwned-policy" in run.log
    assert injected(run.log) == []
