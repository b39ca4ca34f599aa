"""Redaction must not change verdicts: only credentials are masked.

A RAG that names its tokenizer model (`TOKENIZER_MODEL=bert-base-uncased`, a variable whose
name merely contains TOKEN) or its upstream URL (`${OPENAI_API_BASE}` in target.env) in its
answers must keep those words: masking them turns keyword coverage 1 → 0, a false regression.
A real credential under the same kind of name is still masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli

pytestmark = pytest.mark.slow

RAG = """\
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    answer = f"Embedded with {os.environ['TOKENIZER_MODEL']} behind {os.environ['OPENAI_API_BASE']}; key {os.environ['UPSTREAM_KEY']}."
    print(json.dumps({"id": request["id"], "answer": answer, "contexts": [{"text": answer, "doc_id": "a", "source": "a/x.md"}]}), flush=True)
"""


def test_model_names_and_urls_in_answers_are_not_redacted_but_credentials_are(tmp_path: Path):
    (tmp_path / "rag.py").write_text(RAG)
    (tmp_path / "questions.yml").write_text(
        "version: 1\nquestions:\n"
        "  - {id: Q1, question: Which tokenizer?, doc_id: a, sources: [a/x.md], keywords: [bert-base-uncased, 'http://127.0.0.1:8000/v1']}\n"
    )
    (tmp_path / "rag-ci.yml").write_text(
        "questions: questions.yml\ncorpora: {a: {description: A}}\n"
        "target: {kind: command, command: [python, rag.py], pass_env: [TOKENIZER_MODEL],\n"
        "         env: {OPENAI_API_BASE: '${OPENAI_API_BASE}', UPSTREAM_KEY: '${UPSTREAM_KEY}'}}\n"
        "metrics: {keyword_coverage: {threshold: 1.0}}\n"
    )
    key = "sk-up-4Fq9ZkLm2Xw7Pq0R"
    env = {
        "TOKENIZER_MODEL": "bert-base-uncased",
        "OPENAI_API_BASE": "http://127.0.0.1:8000/v1",
        "UPSTREAM_KEY": key,
    }
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(tmp_path / "rag-ci.yml"), "-o", str(out), "--no-progress"],
        env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    [question] = json.loads(out.read_text())["questions"]
    assert "bert-base-uncased" in question["answer"] and "http://127.0.0.1:8000/v1" in question["answer"]
    assert key not in question["answer"] and "key ***." in question["answer"]
    assert question["metrics"]["keyword_coverage"]["score"] == 1.0 and question["verdict"] == "pass"
