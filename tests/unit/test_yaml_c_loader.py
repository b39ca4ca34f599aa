"""The C YAML loader (ruamel.yaml.clib) reads what the pure-Python loader reads,
and errors keep the lines the round-trip loader reports."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from rag_ci.core.base import yamlsrc
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.errors import ValidationError

TRICKY = """\
version: 7
questions:
  - id: Q-1
    question: "What is 0o17, 0x1F, 1_000, 1e3, .5, -.inf?"
    reference: yes no on off true False ~ null
    keywords: [0o17, 0x1F, 1_000, 1e3, .5, -.inf, .NaN, 2026-01-02, yes, No, ~, "", '']
    tags: [a, b]
  - id: Q-2
    question: |
      Multi-line
      literal
    reference: >
      folded
      text
"""


def test_the_c_loader_is_installed_and_reads_exactly_what_the_pure_python_loader_reads():
    assert yamlsrc._loader("safe").Parser.__module__.startswith("ruamel.yaml.clib"), (
        "ruamel.yaml.clib is a dependency"
    )
    fast = yamlsrc.load_yaml_fast(TRICKY)
    pure = YAML(typ="safe", pure=True).load(TRICKY)
    assert repr(fast) == repr(pure)  # repr: NaN != NaN, but prints the same


def test_a_broken_question_set_names_the_same_line_with_or_without_the_c_loader(monkeypatch):
    syntax = TRICKY.replace("    tags: [a, b]\n", "    tags: [a, b\n")
    # parses, then fails
    unknown_field = TRICKY.replace("    tags: [a, b]\n", "    tags: [a, b]\n    colour: blue\n")

    def messages() -> list[str]:
        found = []
        for text in (syntax, unknown_field):
            with pytest.raises(ValidationError) as raised:
                parse_question_set(text, "questions.yml")
            found.append(str(raised.value))
        return found

    with_c = messages()
    from rag_ci.core.questionset import questions

    monkeypatch.setattr(questions, "load_yaml_fast", lambda text: None)  # the pure-Python path alone
    assert messages() == with_c
    assert "questions.yml:8:" in with_c[0] and "questions.yml:8" in with_c[1] and "colour" in with_c[1]


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_question_set_nested_40000_deep_is_refused_not_a_crash(tmp_path, shape):
    """The C composer recurses in C without a limit: past ~30,000 levels the process died
    (segfault, exit 139). Run as a process: a crash must not take the test run with it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    n = 40_000
    deep = "[" * n + "]" * n if shape == "flow" else "\n      " + "- " * n + "x"
    (tmp_path / "questions.yml").write_text(
        f"version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: a\n    tags: {deep}\n"
    )
    (tmp_path / "rag-ci.yml").write_text(
        "questions: questions.yml\ncorpora: {a: {description: A}}\n"
        "target: {kind: python, entry: 'rag:answer'}\n"
    )
    repo = Path(__file__).resolve().parents[2]

    done = subprocess.run(
        [sys.executable, "-m", "rag_ci", "validate", "--config", str(tmp_path / "rag-ci.yml")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )

    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "questions.yml:" in done.stderr and "nested deeper than" in done.stderr
