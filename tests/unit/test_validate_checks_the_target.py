"""`rag-ci validate` refuses a target `run` could not start (issue 55: `init --yes` wrote
`kind: python` with `entry: app:answer`, no such module; `validate` said ok and `run` exited 2).
Each refusal failed on the code before the fix (validate exited 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli

QUESTIONS = """\
version: 1
questions:
  - id: Q1
    question: How long does the charger take?
    reference: 6.5 hours.
    doc_id: docs
"""


def _project(tmp_path: Path, target: str, files: dict[str, str] | None = None) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "questions.yml").write_text(QUESTIONS)
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    config = tmp_path / "rag-ci.yml"
    config.write_text(
        f"questions: questions.yml\ncorpora:\n  docs: {{description: The manual, path: docs}}\n{target}"
    )
    return config


def _validate(config: Path):
    return CliRunner().invoke(cli, ["validate", "--config", str(config)])


@pytest.mark.parametrize(
    ("target", "files", "said"),
    [
        (
            "target: {kind: python, entry: 'app:answer'}\n",
            {},
            "target.entry app:answer: no module app (app.py) in",
        ),
        (
            "target: {kind: python, entry: 'rag.service:answer'}\n",
            {"rag/__init__.py": "", "rag/service.py": "def query(q):\n    return {}\n"},
            "rag/service.py defines no answer at its top level",
        ),
        (
            "target: {kind: command, command: [no-such-rag-program-55, --serve]}\n",
            {},
            "target.command: no program no-such-rag-program-55 on the target's PATH",
        ),
        (
            "target: {kind: command, command: [python, rag.py]}\n",
            {},
            "target.command: python is given rag.py, which is not a file beside rag-ci.yml",
        ),
        (
            "target: {kind: http, url: 'http://127.0.0.1:8000/query', start: [./serve.sh]}\n",
            {},
            "target.start: ./serve.sh is not an executable file",
        ),
    ],
)
def test_a_target_run_cannot_start_is_refused(tmp_path, target, files, said):
    result = _validate(_project(tmp_path, target, files))
    assert result.exit_code == 2, result.output
    assert said in result.output


@pytest.mark.parametrize(
    ("target", "files"),
    [
        ("target: {kind: python, entry: 'app:answer'}\n", {"app.py": "def answer(q):\n    return {}\n"}),
        (
            "target: {kind: python, entry: 'service:answer', path: [src]}\n",
            {"src/service.py": "from .impl import answer\n"},
        ),
        ("target: {kind: python, entry: 'json:loads'}\n", {}),  # an installed module
        ("target: {kind: command, command: [python, rag.py]}\n", {"rag.py": "print()\n"}),
    ],
)
def test_a_target_run_can_start_is_accepted(tmp_path, target, files):
    result = _validate(_project(tmp_path, target, files))
    assert result.exit_code == 0, result.output


def test_what_a_build_step_may_make_is_a_warning_not_a_refusal(tmp_path):
    target = (
        "target: {kind: command, command: [.venv-rag/bin/rag-serve], build: ['python3 -m venv .venv-rag']}\n"
    )
    result = CliRunner().invoke(cli, ["validate", "--config", str(_project(tmp_path, target))])
    assert result.exit_code == 0, result.output
    assert "warning: target.command: .venv-rag/bin/rag-serve is not an executable file" in result.output
    assert "(unless a build step makes it)" in result.output


def test_a_placeholder_corpus_description_is_warned_about(tmp_path):
    """`init` writes `description: "docs documents"`; validate accepted it silently."""
    config = _project(tmp_path, "target: {kind: command, command: [python, -c, pass]}\n")
    config.write_text(config.read_text().replace("The manual", "docs documents"))
    result = _validate(config)
    assert result.exit_code == 0, result.output
    assert (
        "warning: corpus docs: its description 'docs documents' is the placeholder `init` wrote"
        in result.output
    )
    config.write_text(config.read_text().replace("docs documents", "The DU-2 e-bike's manual"))
    assert "placeholder" not in _validate(config).output


def test_init_without_a_terminal_suggests_yes_instead_of_a_bare_aborted(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nThe delay is 10 ms.\n")
    result = CliRunner().invoke(cli, ["init", str(tmp_path), "--no-workflows"], input="")
    assert result.exit_code == 2, result.output
    assert "Aborted!" not in result.output
    assert "no terminal to ask on: `rag-ci init --yes` takes the guesses (target " in result.output
