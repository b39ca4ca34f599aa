"""`rag-ci demo`: the embedded example (examples/, shipped in the wheel) run as main,
then with its routing broken, the comparison on the terminal, exit 1; and the same from a
wheel installed in a fresh virtual environment, as `pipx run rag-ci-gate demo` runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from builders import REPO

EXAMPLE = REPO / "examples"
SHIPPED = ("rag-ci.yml", "questions.yml", "requirements.txt", "corpora", "rag")


def _files(root: Path, names=SHIPPED) -> dict[str, bytes]:
    found = {}
    for name in names:
        path = root / name
        for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            if "__pycache__" not in file.parts and ".index" not in file.parts:
                found[file.relative_to(root).as_posix()] = file.read_bytes()
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel as the release builds it (no isolation: the build backend is in the dev extra)."""
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (found,) = out.glob("rag_ci_gate-*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_ships_the_examples_folder_byte_for_byte(wheel):
    prefix = "rag_ci/templates/example/"
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name[len(prefix) :]: archive.read(name)
            for name in archive.namelist()
            if name.startswith(prefix) and not name.endswith("/")
        }
    example = _files(EXAMPLE)
    assert shipped.keys() == example.keys(), ", ".join(sorted(shipped.keys() ^ example.keys()))
    assert [name for name in example if shipped[name] != example[name]] == []


def _demo(command: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "DEEPEVAL_TELEMETRY_OPT_OUT": "1", **(env or {})}
    environment.pop("EXAMPLE_RAG_REGRESSION", None)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=environment)


def _caught(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1/2 the baseline" in done.stdout and "the baseline: 42/42 pass" in done.stdout
    # the step that makes the baseline says so, not "no baseline to compare with" (a yellow warning)
    assert "no baseline to compare with" not in done.stdout + done.stderr
    assert "27/42 pass (baseline 42/42)" in done.stdout and "13 routing leaks" in done.stdout
    assert "DU2-TORQUE" in done.stdout and "pass → routing_error" in done.stdout
    assert "the gate caught it" in done.stdout


@pytest.mark.slow
def test_the_demo_shows_a_caught_regression_and_exits_1(tmp_path):
    done = _demo([sys.executable, "-m", "rag_ci", "demo", "--keep", str(tmp_path / "demo")], cwd=tmp_path)
    _caught(done)
    assert (tmp_path / "demo" / "baseline.json").is_file() and (tmp_path / "demo" / "results.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # nothing written where it was started


def test_the_demo_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "mine.txt").write_text("mine\n")
    done = _demo([sys.executable, "-m", "rag_ci", "demo", "--keep", str(tmp_path)], cwd=tmp_path)
    assert done.returncode == 2 and "not empty" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


@pytest.mark.slow
def test_the_demo_leaves_no_folder_behind(tmp_path):
    done = _demo(
        [sys.executable, "-m", "rag_ci", "demo", "--format", "md"],
        cwd=tmp_path,
        env={"TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 1 and "routing" in done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_built_wheel_runs_the_demo_in_a_fresh_environment(tmp_path, wheel):
    """What `pipx run rag-ci-gate demo` does: the wheel in an environment of its own, then `rag-ci demo`."""
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, timeout=600
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    environment = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": ""}
    done = _demo([str(python.parent / "rag-ci"), "demo"], cwd=tmp_path, env=environment)
    _caught(done)  # how long it takes is the machine's load as much as rag-ci's: not a test's outcome
