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
    assert yamlsrc._loader("safe").Parser.__module__.startswith("ruamel.yaml.clib"), "ruamel.yaml.clib is a dependency"
    fast = yamlsrc.load_yaml_fast(TRICKY)
    pure = YAML(typ="safe", pure=True).load(TRICKY)
    assert repr(fast) == repr(pure)  # repr: NaN != NaN, but prints the same


def test_a_broken_question_set_names_the_same_line_with_or_without_the_c_loader(monkeypatch):
    syntax = TRICKY.replace("    tags: [a, b]\n", "    tags: [a, b\n")
    unknown_field = TRICKY.replace("    tags: [a, b]\n", "    tags: [a, b]\n    colour: blue\n")  # parses, then fails

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
