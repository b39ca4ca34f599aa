"""An existing API mapped by config: `target.request` + `target.response`
(JMESPath) and nothing else make an app of its own shape a target, leaks included.

The app is tests/fakes/own_api_rag.py, a real HTTP server that refuses rag-ci's own
request shape (422) and answers in its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import free_port, write
from rag_ci.cli import cli

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay?, doc_id: a, sources: [a/x.md], keywords: ["10 ms"]}
  - {id: Q2, question: What is the delay on b?, doc_id: b, sources: [b/y.md], keywords: ["20 ms", "LIN"]}
  - {id: Q3, question: compare both, doc_id: [a, b], sources: [a/x.md, b/y.md]}
"""
MAPPING = """
  request: {ref: "{id}", query: "{question}", collections: "{corpora}"}
  response:
    answer: result.text
    contexts: result.sources
    context: {text: content, doc_id: metadata.collection, source: metadata.file, score: relevance}
    usage: "{model: meta.model, input_tokens: meta.tokens.in, output_tokens: meta.tokens.out}"
"""


def _project(tmp_path: Path, mapping: str = MAPPING) -> Path:
    port = free_port()
    write(tmp_path / "questions.yml", QUESTIONS)
    return write(
        tmp_path / "rag-ci.yml",
        (
            "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
            "metrics: {hit_at_k: {k: 5}, keyword_coverage: {threshold: 0.6}}\n"
            f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/v1/ask\n  health: /health\n"
            f"  start: [{sys.executable}, {FAKES / 'own_api_rag.py'}, '{port}']\n  pass_env: [OWN_API_LEAK]\n"
            + mapping
        ),
    )


def _run(config: Path, output: Path, env=None):
    return CliRunner().invoke(
        cli,
        ["run", "--config", str(config), "-o", str(output), "--no-progress"],
        env=env or {},
        catch_exceptions=False,
    )


def test_an_api_of_its_own_shape_runs_with_only_request_and_response_in_the_config(tmp_path):
    result = _run(_project(tmp_path), tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert [q["verdict"] for q in run["questions"]] == ["pass", "pass", "pass"]
    q3 = run["questions"][2]
    assert [(c["doc_id"], c["source"], c["score"]) for c in q3["contexts"]] == [
        ("a", "a/x.md", 0.8),
        ("b", "b/y.md", 0.8),
    ]
    assert q3["usage"]["input_tokens"] == 40 and run["meta"]["generator_models"] == ["own-llm-1"]
    # rag-ci's, as recorded, with the question's own W3C trace context
    assert q3["request"] == {
        "id": "Q3",
        "question": "compare both",
        "corpora": ["a", "b"],
        "traceparent": q3["request"]["traceparent"],
    }
    assert q3["request"]["traceparent"].startswith(f"00-{q3['trace_id']}-")


def test_without_the_mapping_the_app_refuses_rag_cis_shape_and_the_run_says_so(tmp_path):
    result = _run(_project(tmp_path, mapping=""), tmp_path / "r.json")
    assert result.exit_code == 2
    assert "target answered HTTP 422" in result.output


def test_a_doc_id_read_from_the_chunks_metadata_shows_the_apps_routing_leak(tmp_path):
    result = _run(_project(tmp_path), tmp_path / "r.json", env={"OWN_API_LEAK": "1"})
    assert result.exit_code == 1  # a leak gates, with no baseline too
    run = json.loads((tmp_path / "r.json").read_text())
    assert {q["verdict"] for q in run["questions"]} == {"routing_error"}
    assert run["questions"][0]["leaks"] == ["other"]


def test_a_mapping_that_does_not_fit_the_reply_is_a_malformed_response_naming_the_expression(tmp_path):
    wrong = MAPPING.replace("answer: result.text", "answer: result.answer")
    result = _run(_project(tmp_path, mapping=wrong), tmp_path / "r.json")
    assert result.exit_code == 2
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["questions"][0]["error"].startswith(
        'malformed response: target.response.answer `result.answer` found nothing, not text, in the reply {"result": '
    )


def test_a_jmespath_type_error_is_a_target_error_the_breaker_counts(tmp_path):
    """Before: `join` on objects was `internal error: JMESPathTypeError`, bypassing the breaker."""
    joined = MAPPING.replace("answer: result.text", "answer: \"join(' ', result.sources)\"")
    config = _project(tmp_path, mapping=joined + "  max_errors_at_start: 2\n  concurrency: 1\n")
    result = _run(config, tmp_path / "r.json")
    assert result.exit_code == 2, result.output
    assert "the first 2 questions all failed (target.max_errors_at_start: 2)" in result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["questions"][0]["error"].startswith(
        "malformed response: target.response.answer: join() needs strings, got an object at result.sources[0]"
    )
    assert "internal error" not in result.output


@pytest.mark.parametrize(
    "mapping, line, message",
    [
        (
            MAPPING.replace("contexts: result.sources", "contexts: result.sources[?"),
            14,
            "target.response.contexts: not a JMESPath expression (Invalid jmespath expression: Incomplete expression",
        ),
        (
            MAPPING.replace('"{question}"', '"{query}"'),
            11,
            "target.request: unknown placeholder {query} in '{query}'",
        ),
        (
            MAPPING.replace('query: "{question}"', 'query: "what?"'),
            11,
            "target.request: the template never sends the question",
        ),
        (
            MAPPING.replace("score: relevance}", "score: relevance, rank: r}"),
            15,
            "target.response.context.rank: unknown field",
        ),
    ],
)
def test_a_bad_mapping_is_a_config_error_with_file_and_line(tmp_path, mapping, line, message):
    config = _project(tmp_path, mapping=mapping)
    result = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 2
    assert f"{config}:{line}: {message}" in result.output
