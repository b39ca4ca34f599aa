"""End to end: what the runner does around the action's step.

A cancelled job (the runner sends SIGINT, then SIGTERM) is not a regression: exit 130 /
143, an annotation saying so, `verdict: interrupted`, no traceback, the target stopped.
Before: a traceback and exit -2 / 1. The next step (actions/upload-artifact, as the
runner's user) can read what the action wrote: files 0644, folders 0755, even under a
umask of 077. Before: results.json and the reports were 0600, root's only.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from action_harness import REPO, finished_action, push_event, run_action, start_action

from drive import processes_running
from fakes.fake_github import FakeGitHubServer

pytestmark = pytest.mark.slow
QUESTIONS = "version: 1\nquestions:\n" + "".join(
    f"  - {{id: Q{i:02d}, question: What is the delay?, doc_id: a, sources: [a/x.md]}}\n" for i in range(12)
)


def tiny_repository(root: Path) -> Path:
    root.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "fakes" / "tiny_rag.py", root / "tiny_rag.py")
    (root / "questions.yml").write_text(QUESTIONS)
    (root / "rag-ci.yml").write_text(
        "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        f"target: {{kind: command, command: [python, {root / 'tiny_rag.py'}], pass_env: ['TINY_RAG_*'], concurrency: 1}}\n"
        "metrics: {hit_at_k: {k: 5}}\n"
    )
    return root


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_cancelled_job_exits_128_plus_the_signal_with_an_annotation_and_no_traceback(
    tmp_path, token, sig, code
):
    workspace = tiny_repository(tmp_path / "workspace")
    journal = workspace / "rag-ci-output" / "results.json.partial.jsonl"
    with FakeGitHubServer(token=token) as fake:
        # The target stalls after a warm-up and three questions: the job is still running when it
        # is cancelled, however slowly this test watches it.
        process = start_action(
            fake,
            workspace,
            event_name="push",
            event=push_event(),
            token=token,
            env={"TINY_RAG_STALL_AFTER": "4"},
        )
        deadline = time.monotonic() + 120  # a hang guard only
        while time.monotonic() < deadline and (
            not journal.exists() or len(journal.read_text().splitlines()) < 3
        ):
            time.sleep(0.05)
        assert processes_running(str(workspace / "tiny_rag.py")), "the target should be answering"
        process.send_signal(sig)
        stdout, stderr = process.communicate(timeout=120)
        run = finished_action(process, stdout, stderr, workspace)
    assert run.returncode == code, run.log
    assert f"::error title=rag-ci%3A interrupted::rag-ci was interrupted by {sig.name}" in run.stdout
    assert run.outputs["verdict"] == "interrupted"
    assert "Traceback" not in run.stderr, run.stderr
    assert processes_running(str(workspace / "tiny_rag.py")) == []


def _modes(folder: Path) -> dict[str, int]:
    return {
        p.relative_to(folder).as_posix() or ".": stat.S_IMODE(p.stat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


def test_what_the_action_writes_is_readable_by_the_next_step_even_under_umask_077(tmp_path, token):
    # The runner's user reads the folder in the next step: here, root writes and `nobody` reads.
    base = Path(tempfile.mkdtemp(prefix="rag-ci-readable-"))
    try:
        os.chmod(base, 0o755)
        workspace = tiny_repository(base / "workspace")
        with FakeGitHubServer(token=token) as fake:
            run = run_action(
                fake,
                workspace,
                event_name="workflow_dispatch",
                event=push_event(),
                token=token,
                env={"RAG_CI_MODE": "full"},
                umask=0o077,
            )
        assert run.returncode == 0, run.log
        output = workspace / "rag-ci-output"
        modes = _modes(output)
        assert {"results.json", "report.html", "report.md"} <= set(modes), modes
        assert all(mode == (0o755 if (output / name).is_dir() else 0o644) for name, mode in modes.items()), (
            modes
        )
        if os.geteuid() == 0:  # as the next step would: another user, no group of root's
            nobody = pwd.getpwnam("nobody")
            read = {
                name: subprocess.run(
                    ["cat", str(output / name)],
                    capture_output=True,
                    user=nobody.pw_uid,
                    group=nobody.pw_gid,
                    extra_groups=[],
                    timeout=30,
                )
                for name in ("results.json", "report.html")
            }
            assert all(done.returncode == 0 for done in read.values()), {n: d.stderr for n, d in read.items()}
            assert len(json.loads(read["results.json"].stdout)["questions"]) == 12
    finally:
        shutil.rmtree(base, ignore_errors=True)


# A RAG that finds the runner's command files (here given as arguments) and writes them:
# a variable for every later step, an output, and a daemon that keeps writing after the run.
WRITES_COMMAND_FILES = """
import json, os, sys, time
env_file, output_file = sys.argv[1], sys.argv[2]
started = False
for line in sys.stdin:
    request = json.loads(line)
    for path, text in ((env_file, "LD_PRELOAD=/tmp/evil.so\\n"), (output_file, "verdict<<EOF\\npass\\nEOF\\n")):
        try:
            with open(path, "a") as f:
                f.write(text)
        except OSError:
            pass
    if not started and os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for _ in range(400):
                with open(env_file, "a") as f:
                    f.write("NODE_OPTIONS=--require=/tmp/evil.js\\n")
                time.sleep(0.05)
        os._exit(0)
    started = True
    print(json.dumps({"answer": "The delay is 10 ms on CAN.", "contexts": [{"text": "t", "doc_id": "a", "source": "a/x.md"}]}), flush=True)
"""


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the target runs as the checkout's owner only when rag-ci runs as root"
)
def test_a_target_that_writes_the_runners_command_files_is_undone_and_the_run_stands(token):
    # Before: GITHUB_ENV kept LD_PRELOAD for every later step of the job; then the undoing
    # turned a clean run into exit 2: rag-ci owns the files, the verdict stands.
    nobody = pwd.getpwnam("nobody")
    base = Path(tempfile.mkdtemp(prefix="rag-ci-command-files-"))
    try:
        os.chmod(base, 0o755)
        workspace = tiny_repository(base / "workspace")
        runner_dir = base / "runner-workspace"
        runner_dir.mkdir()
        env_file, output_file = runner_dir / "set_env.txt", runner_dir / "output.txt"
        for path in (env_file, output_file, runner_dir / "step_summary.md"):
            path.write_text("")
        (workspace / "writes_files.py").write_text(WRITES_COMMAND_FILES)
        (workspace / "rag-ci.yml").write_text(
            (workspace / "rag-ci.yml")
            .read_text()
            .replace(
                f"command: [python, {workspace / 'tiny_rag.py'}]",
                f"command: [/usr/bin/python3, writes_files.py, {env_file}, {output_file}]",
            )
        )
        for path in [workspace, *workspace.rglob("*"), runner_dir, *runner_dir.iterdir()]:
            # the runner's user owns both, as on GitHub's runners
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        with FakeGitHubServer(token=token) as fake:
            run = run_action(
                fake,
                workspace,
                event_name="push",
                event=push_event(),
                token=token,
                env={"RAG_CI_TARGET_USER": "", "GITHUB_ENV": str(env_file)},
            )
        assert run.returncode == 0, run.log
        assert "the target wrote to the runner's command files GITHUB_ENV, GITHUB_OUTPUT" in run.stdout
        time.sleep(0.5)  # the daemon, had it survived, would have written again by now
        assert env_file.read_text() == ""
        assert (
            "LD_PRELOAD" not in output_file.read_text()
            and "verdict<<EOF\npass" not in output_file.read_text()
        )
        assert run.outputs["verdict"] != "error"
    finally:
        shutil.rmtree(base, ignore_errors=True)
