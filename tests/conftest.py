"""Shared test set-up: nothing phones home, and helpers to make small projects."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
# Under root (this suite in a container), rag-ci starts targets as an unprivileged user that
# cannot enter pytest's private tmp folders; the tests of that behaviour set their own user.
os.environ.setdefault("RAG_CI_TARGET_USER", "root")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from builders import EXAMPLES, REPO, write  # noqa: F401  (re-exported for tests)


@pytest.fixture
def tiny_project(tmp_path: Path):
    """A two-corpus project with an in-memory fake RAG (tests/fakes/tiny_rag.py) as target."""

    def make(target_yaml: str, questions_yaml: str | None = None, extra_yaml: str = "") -> Path:
        write(tmp_path / "questions.yml", questions_yaml or TINY_QUESTIONS)
        config = f"questions: questions.yml\ncorpora: {{a: {{description: A}}, b: {{description: B}}}}\n{textwrap.dedent(target_yaml).rstrip()}\n{extra_yaml}"
        return write(tmp_path / "rag-ci.yml", config)

    return make


TINY_QUESTIONS = """
version: 1
questions:
  - id: Q1
    question: What is the delay?
    doc_id: a
    sources: [a/x.md]
    keywords: ["10 ms"]
  - id: Q2
    question: What is the delay on b?
    doc_id: b
    sources: [b/y.md]
    keywords: ["20 ms", "LIN"]
  - id: Q3
    question: compare both
    doc_id: [a, b]
    sources: [a/x.md, b/y.md]
    tags: [cross]
  - id: OOS
    question: Who is the CEO?
    expect: refusal
    tags: [out_of_scope]
"""
