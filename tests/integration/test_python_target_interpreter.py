"""Which interpreter a `kind: python` target's worker runs with, and so which packages the
user's module imports: the RAG's own venv in rag-ci's image, `target.python` when named,
else rag-ci's interpreter (rag_ci/targets/python.py).

The RAG's venv is real (`python -m venv --without-pip`, well under a second) and holds a
marker module, `rag_only_pin`, that exists nowhere else: a worker started with any other
interpreter cannot import the RAG at all. rag-ci's own pydantic must not be visible there.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.errors import RagCiError
from rag_ci.targets import venv as target_venv
from rag_ci.targets.python import WORKER, worker_interpreter

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PINNED_RAG = """
import importlib.util
import sys

import rag_only_pin  # installed in the RAG's venv only
from tiny_rag import answer as tiny_answer


def answer(request):
    reply = tiny_answer(request)
    seen = "absent" if importlib.util.find_spec("pydantic") is None else "present"
    reply["answer"] += f" [pin {rag_only_pin.VERSION} prefix {sys.prefix} pydantic {seen}]"
    return reply
"""


@pytest.fixture(scope="module")
def rag_venv(tmp_path_factory) -> Path:
    """A virtual environment the way a RAG's build step makes one, with one package of its own."""
    venv = tmp_path_factory.mktemp("rag") / "rag-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    Path(purelib, "rag_only_pin.py").write_text('VERSION = "1.10.13"\n')
    return venv


def pinned_project(tiny_project, tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "pinned_rag.py").write_text(PINNED_RAG)
    return tiny_project(f"""
        target:
          kind: python
          entry: pinned_rag:answer
          path: [{FAKES}]
          {extra}
        """)


def answers(results_file: Path) -> list[str]:
    return [q["answer"] for q in json.loads(results_file.read_text())["questions"] if q.get("answer")]


def run(config: Path, out: Path, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        cli,
        ["run", "--config", str(config), "-o", str(out), "--no-progress"],
        env=env,
        catch_exceptions=False,
    )


def test_in_the_image_a_python_target_imports_from_the_rag_venv_not_rag_ci_environment(
    rag_venv, tiny_project, tmp_path
):
    config = pinned_project(tiny_project, tmp_path)
    target_venv.ensure_target_venv.cache_clear()

    result = run(
        config,
        tmp_path / "results.json",
        env={"RAG_CI_IMAGE": "1", "RAG_CI_TARGET_VENV": str(rag_venv), "RAG_CI_TARGET_USER": "root"},
    )

    assert result.exit_code == 0, result.output
    replies = answers(tmp_path / "results.json")
    assert replies and all(f"[pin 1.10.13 prefix {rag_venv} pydantic absent]" in a for a in replies), replies


def test_target_python_runs_the_worker_with_the_named_venv_outside_the_image(
    rag_venv, tiny_project, tmp_path
):
    relative = os.path.relpath(rag_venv / "bin" / "python", tmp_path)  # relative to the config's folder
    config = pinned_project(tiny_project, tmp_path, f"python: {relative}")

    result = run(config, tmp_path / "results.json")

    assert result.exit_code == 0, result.output
    replies = answers(tmp_path / "results.json")
    assert replies and all(f"prefix {rag_venv} pydantic absent]" in a for a in replies), replies


def test_a_target_python_that_does_not_exist_exits_2_naming_the_setting(tiny_project, tmp_path):
    config = pinned_project(tiny_project, tmp_path, "python: .venv-rag/bin/python")

    result = run(config, tmp_path / "results.json")

    assert result.exit_code == 2, result.output
    assert "target.python: .venv-rag/bin/python is not an executable file" in result.output


def test_without_a_setting_outside_the_image_the_worker_is_rag_ci_interpreter(tmp_path):
    assert worker_interpreter(None, tmp_path, "/usr/bin", environ={}) == sys.executable


def test_a_bare_target_python_is_looked_up_on_the_target_path(rag_venv, tmp_path):
    assert worker_interpreter("python", tmp_path, f"{rag_venv / 'bin'}:/usr/bin", environ={}) == str(
        rag_venv / "bin" / "python"
    )
    with pytest.raises(RagCiError, match="target.python: no python3.0 on the target's PATH"):
        worker_interpreter("python3.0", tmp_path, str(tmp_path), environ={})


def test_the_worker_needs_only_the_standard_library():
    """What lets any Python 3 run it: no import outside the standard library (nor rag_ci)."""
    nodes = list(ast.walk(ast.parse(WORKER.read_text())))
    imported = {
        alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in nodes if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)
