"""A pull request's `target.generator_family` cannot hide a known generator's family.

The RAG reports `usage.model: gpt-4o-mini-2024-07-18` (OpenAI) and the config claims
`generator_family: mistral`; an OpenAI judge must still refuse to grade those answers, before
it is asked about them. The override stays what it is for: naming an unknown model's family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fakes.judge_servers import FakeOpenAIJudgeServer
from rag_ci.cli import cli
from rag_ci.errors import RagCiError
from rag_ci.judges.families import check_families

pytestmark = pytest.mark.slow

RAG = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "answer": "10 ms", "contexts": [{"text": "10 ms", "doc_id": "a", "source": "a/x.md"}],
                      "usage": {"model": sys.argv[1]}}), flush=True)
"""


def project(tmp_path: Path, judge_url: str, usage_model: str, family: str) -> Path:
    (tmp_path / "rag.py").write_text(RAG)
    (tmp_path / "questions.yml").write_text(
        "version: 1\nquestions:\n  - {id: Q1, question: Delay?, reference: 10 ms, doc_id: a}\n"
    )
    (tmp_path / "rag-ci.yml").write_text(
        "questions: questions.yml\ncorpora: {a: {description: A}}\n"
        f"target: {{kind: command, command: [python, rag.py, {usage_model}], generator_family: {family}}}\n"
        f"judge: {{provider: openai, model: gpt-4.1-mini-2025-04-14, base_url: '{judge_url}', max_retries: 0}}\n"
        "metrics: {correctness: {}}\n"
    )
    return tmp_path / "rag-ci.yml"


def run_judged(tmp_path: Path, usage_model: str):
    """`rag-ci run` of a RAG reporting `usage_model` while its config claims `generator_family: mistral`."""
    with FakeOpenAIJudgeServer() as judge:
        config = project(tmp_path, judge.base_url, usage_model, "mistral")
        result = CliRunner().invoke(
            cli,
            ["run", "--config", str(config), "-o", str(tmp_path / "r.json"), "--no-progress"],
            env={"OPENAI_API_KEY": "sk-test-0123456789"},
            catch_exceptions=False,
        )
    return result, judge


def test_a_declared_family_that_contradicts_the_reported_model_does_not_pass_the_family_check(tmp_path):
    result, judge = run_judged(tmp_path, "gpt-4o-mini-2024-07-18")
    assert result.exit_code == 2, result.output
    assert "is of the openai family, like the judge" in result.output
    assert (
        "`target.generator_family: mistral` names the family of a model rag-ci does not know" in result.output
    )
    assert judge.requests == 0


def test_the_declared_family_still_names_an_unknown_model_and_the_judge_runs(tmp_path):
    result, judge = run_judged(tmp_path, "house-model-3")
    assert result.exit_code == 0, result.output
    assert judge.requests > 0
    assert (
        json.loads((tmp_path / "r.json").read_text())["questions"][0]["metrics"]["correctness"]["error"]
        is None
    )


def test_family_check_rules():
    # unknown model: the override names it
    check_families("gpt-4.1-mini-2025-04-14", "openai", "house-model-3", "mistral")
    check_families("gpt-4.1-mini-2025-04-14", "openai", "mistral-small-2409", None)
    with pytest.raises(RagCiError, match="is of the openai family"):
        check_families("gpt-4.1-mini-2025-04-14", "openai", "gpt-4o-mini-2024-07-18", "mistral")
    with pytest.raises(
        RagCiError, match="both of the openai family"
    ):  # a judge.family override hides nothing either
        check_families("gpt-4.1-mini-2025-04-14", "meta", "gpt-4o-mini-2024-07-18", None)
