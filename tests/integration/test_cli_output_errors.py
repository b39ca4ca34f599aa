"""Environment errors on the output side exit 2 with their cause (1 means "regression"),
and the resume journal never loses or mixes finished work."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import question, run
from rag_ci.cli import cli
from rag_ci.files.journal import Journal, journal_path
from rag_ci.files.project import load_project
from rag_ci.files.results_file import save_results

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PYTHON_TARGET = f"target:\n  kind: python\n  entry: tiny_rag:answer\n  path: [{FAKES}]\n"
COMMAND_TARGET = f"target:\n  kind: command\n  command: [python, {FAKES / 'tiny_rag.py'}]\n  pass_env: ['TINY_RAG_*']\n  timeout_s: 5\n  concurrency: 1\n"


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@contextlib.contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A real small or read-only file system (root only); skips where mounting is not allowed."""
    folder.mkdir(parents=True, exist_ok=True)
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
        ).returncode
    ):
        pytest.skip("needs root and permission to mount a tmpfs")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    if os.geteuid() == 0:  # root ignores permissions: use a read-only file system
        with tmpfs(folder, "ro,size=64k") as mounted:
            yield mounted
    else:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)


def test_a_read_only_output_folder_exits_2_before_any_question_is_asked(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET)
    log = tmp_path / "asked.log"
    with read_only_folder(tmp_path / "ro") as folder:
        result = invoke(
            "run",
            "--config",
            config,
            "-o",
            folder / "results.json",
            "--no-progress",
            env={"TINY_RAG_LOG": str(log)},
        )
        assert result.exit_code == 2
        assert f"cannot write {folder / 'results.json'}:" in result.output
        assert "Read-only file system" in result.output or "Permission denied" in result.output
        assert not log.exists()  # refused before the target was asked anything

        save_results(tmp_path / "r.json", run(question("A")))
        for command in (
            ["compare", tmp_path / "r.json", tmp_path / "r.json"],
            ["report", tmp_path / "r.json"],
            ["merge", tmp_path / "r.json"],
        ):
            result = invoke(*command, "-o", folder / "report.md")  # refused before the inputs are read
            assert result.exit_code == 2 and f"cannot write {folder / 'report.md'}:" in result.output, command


def test_an_output_that_is_a_folder_exits_2_before_any_question_is_asked(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET)
    log = tmp_path / "asked.log"
    (tmp_path / "out").mkdir()
    result = invoke(
        "run", "--config", config, "-o", tmp_path / "out", "--no-progress", env={"TINY_RAG_LOG": str(log)}
    )
    assert (
        result.exit_code == 2 and f"output {tmp_path / 'out'} is a folder; give a file name" in result.output
    )
    assert not log.exists()
    save_results(tmp_path / "r.json", run(question("A")))
    for command in (
        ["compare", tmp_path / "r.json", tmp_path / "r.json"],
        ["report", tmp_path / "r.json"],
        ["merge", tmp_path / "r.json"],
    ):
        result = invoke(*command, "-o", tmp_path / "out")
        assert result.exit_code == 2 and "is a folder" in result.output, command


def test_a_full_disk_exits_2_with_the_cause(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET)
    assert (
        invoke(
            "run", "--config", config, "-o", tmp_path / "shard.json", "--shard", "1/1", "--no-progress"
        ).exit_code
        == 0
    )
    with tmpfs(tmp_path / "small", "size=4k") as disk:  # one page, taken by the lock: the run fills the disk
        result = invoke("run", "--config", config, "-o", disk / "results.json", "--no-progress")
        assert result.exit_code == 2
        assert (
            f"cannot write {disk / 'results.json'}" in result.output
            and "No space left on device (the disk is full)" in result.output
        )
    with tmpfs(tmp_path / "full", "size=4k") as disk:
        with pytest.raises(OSError), open(disk / "filler", "wb") as filler:
            filler.write(b"x" * 8192)
        for command in (
            ["compare", tmp_path / "shard.json", tmp_path / "shard.json"],
            ["report", tmp_path / "shard.json"],
            ["merge", tmp_path / "shard.json"],
        ):
            result = invoke(*command, "-o", disk / "out.md")
            assert result.exit_code == 2 and "No space left on device (the disk is full)" in result.output, (
                command
            )
            assert not (disk / "out.md").exists()


def _many_questions(n: int) -> str:
    return "version: 1\nquestions:\n" + "".join(
        f"  - {{id: Q{i:04d}, question: What is the delay?, doc_id: a}}\n" for i in range(n)
    )


def test_a_second_run_on_the_same_output_is_refused_and_a_killed_run_does_not_block(tiny_project, tmp_path):
    config = tiny_project(COMMAND_TARGET, _many_questions(30))
    output, journal = tmp_path / "r.json", tmp_path / "r.json.partial.jsonl"
    env = dict(os.environ)
    command = [
        sys.executable,
        "-m",
        "rag_ci.cli",
        "run",
        "--config",
        str(config),
        "-o",
        str(output),
        "--no-progress",
    ]
    # The first run's target stalls after a warm-up and three questions: the run still holds its
    # output when the second one starts, however slowly this test gets there.
    first = subprocess.Popen(
        command, env={**env, "TINY_RAG_STALL_AFTER": "4"}, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120  # a hang guard only
        while time.monotonic() < deadline and (
            not journal.exists() or len(journal.read_text().splitlines()) < 3
        ):
            time.sleep(0.05)
        before = journal.read_text()
        second = invoke(
            "run",
            "--config",
            config,
            "-o",
            output,
            "--no-progress",
            "--resume",
            env={"TINY_RAG_LOG": str(tmp_path / "second.log")},
        )
        assert second.exit_code == 2
        assert f"another rag-ci run is writing {output} (pid {first.pid})" in second.output
        assert not (tmp_path / "second.log").exists()
        assert journal.read_text().startswith(before)  # the first run's journal is untouched
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    resumed = subprocess.run(command + ["--resume"], env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr  # the dead run's lock went with it
    assert [q["id"] for q in json.loads(output.read_text())["questions"]] == [f"Q{i:04d}" for i in range(30)]


def test_killing_a_resume_while_it_rewrites_the_journal_loses_no_finished_question(tiny_project, tmp_path):
    n = 1000
    config = tiny_project(
        COMMAND_TARGET, _many_questions(n) + "  - {id: LAST, question: sleep forever, doc_id: a}\n"
    )
    project = load_project(config)
    output = tmp_path / "r.json"
    header = {
        "config": project.config.fingerprint(),
        "questions": project.questions.content_hash,
        "full": False,
        "shard": None,
    }
    journal = Journal(journal_path(output), header)
    journal.open([])
    for q in project.questions.questions[:n]:
        record = question(q.id)
        record.question_hash = q.content_hash
        journal.append(record)
    journal.close(remove=False)
    path = journal_path(output)
    inode, size = path.stat().st_ino, path.stat().st_size

    command = [
        sys.executable,
        "-m",
        "rag_ci.cli",
        "run",
        "--config",
        str(config),
        "-o",
        str(output),
        "--no-progress",
        "--resume",
    ]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while (
            time.monotonic() < deadline
        ):  # the moment the rewrite starts: truncation, a temp file, or the rename
            try:
                stat = path.stat()
                if (
                    stat.st_ino != inode
                    or stat.st_size < size
                    or any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
                ):
                    break
            except FileNotFoundError:
                break
            time.sleep(0.001)
        else:
            pytest.fail("the resume never started rewriting its journal")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert len(Journal(path, header).read_finished()) == n
