"""Inside rag-ci's image, the user's RAG gets a virtual environment of its own.

rag-ci's packages are pinned (requirements/action.lock): a build step such as
`pip install -r requirements.txt` that pins pydantic<2 must not change them mid-run.
So in the image (RAG_CI_IMAGE=1) build steps and target commands run with a virtual
environment first on PATH: `python` and `pip` are the RAG's, made from the base
image's python3, and rag-ci's own interpreter folder is not on PATH at all. The
worker of a `kind: python` target runs with this venv's python too (targets/python.py).

The environment is made once per job and reused by later runs in the same job:
`RAG_CI_TARGET_VENV` when set, else `$RUNNER_TEMP/rag-ci-target-venv`, else
`<tmp>/rag-ci-target-venv`. It belongs to the user the target runs as, who installs
into it.

Outside the image nothing changes: a leading `python` is the interpreter running
rag-ci (docs/container.md says how to point at the RAG's own venv instead).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from rag_ci.errors import RagCiError
from rag_ci.safety.logsafe import neutralise

TARGET_VENV_VARIABLE = "RAG_CI_TARGET_VENV"
IMAGE_VARIABLE = "RAG_CI_IMAGE"


def target_venv_dir(environ: Mapping[str, str]) -> Path | None:
    """Where the RAG's environment lives, or None outside the image."""
    if environ.get(IMAGE_VARIABLE) != "1":
        return None
    if environ.get(TARGET_VENV_VARIABLE):
        return Path(environ[TARGET_VENV_VARIABLE])
    return Path(environ.get("RUNNER_TEMP") or tempfile.gettempdir()) / "rag-ci-target-venv"


def base_python() -> str:
    """The python3 rag-ci's own virtual environment was made from (the base image's)."""
    for name in ("python3", "python"):
        candidate = Path(sys.base_prefix) / "bin" / name
        if candidate.exists():
            return str(candidate)
    return "python3"


@functools.cache
def ensure_target_venv(path: Path, uid: int | None, gid: int | None) -> Path:
    """Make the environment once (kept when it already has a python) and hand it to the target's user."""
    if not (path / "bin" / "python").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [base_python(), "-m", "venv", str(path)], capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise RagCiError(
                f"could not create the RAG's virtual environment {path}: {done.stderr.strip()[-500:]}"
            )
        print(
            neutralise(
                f"[rag-ci] the RAG's build steps and commands run in their own virtual environment {path}"
            ),
            file=sys.stderr,
            flush=True,
        )
    if uid is not None:
        for root, dirs, files in os.walk(path):
            for name in (root, *(os.path.join(root, n) for n in dirs + files)):
                os.lchown(name, uid, gid if gid is not None else -1)
    return path


def venv_path_entries(path: Path, current_path: str) -> str:
    """PATH for the target: the RAG's venv first, and never rag-ci's own interpreter folder."""
    own = os.path.dirname(sys.executable)
    kept = [p for p in current_path.split(os.pathsep) if p and p != own]
    return os.pathsep.join([str(path / "bin"), *kept])
