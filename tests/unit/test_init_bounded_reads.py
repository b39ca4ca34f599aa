"""`rag-ci init` reads the head of regular files only: a FIFO, a device or a huge file in the
repository never hangs it nor fills the memory.

Before, `package.json`'s `main: /dev/zero` was read until the memory ran out, a `main` that is
a FIFO blocked for ever, and a 1.5 GB `app.py` was read whole before being cut to 100,000
characters. Each case runs `rag-ci init --yes` in a process with 1 GB of address space (what
a whole read of those files exceeds); the time limit only keeps a hang of the old code from
holding the suite.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from builders import REPO

MEMORY_BYTES = 1 << 30
SAFETY_NET_S = 300


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def init_yes(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag_ci", "init", str(root), "--yes", "--no-workflows"],
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
        preexec_fn=limited_memory,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def project(root: Path) -> Path:
    (root / "docs" / "manual").mkdir(parents=True)
    (root / "docs" / "manual" / "a.md").write_text("# Manual\n\nThe delay is 10 ms.\n")
    return root


def express(root: Path, main: str) -> None:
    (root / "package.json").write_text(json.dumps({"main": main, "dependencies": {"express": "^4"}}))


@pytest.mark.parametrize("main", ["/dev/zero", "fifo.js"])
def test_a_package_main_that_is_a_device_or_a_fifo_is_not_read(tmp_path, main):
    root = project(tmp_path)
    express(root, main)
    if main == "fifo.js":
        os.mkfifo(root / "fifo.js")  # no writer ever: a blocking open waits for ever

    done = init_yes(root)

    assert done.returncode == 0, done.stderr[-2000:]
    text = (root / "rag-ci.yml").read_text()
    assert "Express in package.json" in text and "127.0.0.1:3000" in text, text


def test_a_huge_app_py_is_read_only_up_to_its_limit(tmp_path):
    root = project(tmp_path)
    app = root / "app.py"
    app.write_text("from fastapi import FastAPI\napp = FastAPI()\n# port=8123\n")
    with app.open("r+b") as handle:  # 1.5 GB, sparse: nothing of it is on the disk
        handle.truncate(1_500_000_000)

    done = init_yes(root)

    assert done.returncode == 0, done.stderr[-2000:]
    text = (root / "rag-ci.yml").read_text()
    assert "FastAPI in app.py" in text and "127.0.0.1:8123" in text, text


def test_a_main_outside_the_repository_is_not_read(tmp_path):
    root = project(tmp_path / "repo")
    (tmp_path / "server.js").write_text("app.listen(4321)\n")
    express(root, "../server.js")

    done = init_yes(root)

    assert done.returncode == 0, done.stderr[-2000:]
    assert "127.0.0.1:3000" in (root / "rag-ci.yml").read_text()
