"""In rag-ci's image the user's RAG runs in a virtual environment of its own (rag_ci.targets.venv)."""

from __future__ import annotations

import os
import subprocess
import sys

from rag_ci.targets import venv as target_venv
from rag_ci.targets.processes import process_env

OWN_BIN = os.path.dirname(sys.executable)


def test_outside_the_image_a_leading_python_is_rag_ci_interpreter(tmp_path):
    env = process_env({}, {"PATH": "/usr/bin", "RUNNER_TEMP": str(tmp_path)})

    assert env["PATH"].split(os.pathsep)[0] == OWN_BIN
    assert not (tmp_path / "rag-ci-target-venv").exists()


def test_the_image_puts_the_rag_venv_first_and_leaves_rag_ci_environment_out(tmp_path):
    environ = {
        "RAG_CI_IMAGE": "1",
        "RUNNER_TEMP": str(tmp_path),
        "PATH": f"{OWN_BIN}{os.pathsep}/usr/bin",
        "PYTHONPATH": "/opt/rag-ci/src",
    }
    target_venv.ensure_target_venv.cache_clear()

    env = process_env({}, environ)
    again = process_env({}, environ)  # a later build step or the command: the same, made once

    venv = tmp_path / "rag-ci-target-venv"
    assert env["PATH"].split(os.pathsep) == [str(venv / "bin"), "/usr/bin"] == again["PATH"].split(os.pathsep)
    assert env["VIRTUAL_ENV"] == str(venv) and "PYTHONPATH" not in env
    # What a build step's `python` and `pip` are: the RAG's venv, not rag-ci's interpreter.
    where = subprocess.run(
        "python -c 'import sys; print(sys.prefix)'; pip --version",
        shell=True,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.returncode == 0, where.stderr
    prefix, pip = where.stdout.splitlines()
    assert prefix == str(venv) and str(venv) in pip
    assert target_venv.ensure_target_venv.cache_info().misses == 1


def test_rag_ci_target_venv_names_the_folder(tmp_path):
    assert (
        target_venv.target_venv_dir({"RAG_CI_IMAGE": "1", "RAG_CI_TARGET_VENV": str(tmp_path / "v")})
        == tmp_path / "v"
    )
    assert target_venv.target_venv_dir({"RAG_CI_TARGET_VENV": str(tmp_path / "v")}) is None
