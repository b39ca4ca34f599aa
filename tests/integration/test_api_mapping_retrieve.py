"""An API that answers at one endpoint and searches at another, mapped by config alone:
`target.retrieve` sends a second call per question and joins its contexts with the answer
call's, so retrieval metrics and routing leaks are read from the search call.

The app is tests/fakes/split_api_rag.py, a real HTTP server: /answer takes no collection
filter and returns no chunks; /search takes the filter and returns the chunks.
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
ANSWER = """
  request: {question: "{question}"}
  response: {answer: answer}
"""
RETRIEVE = """
  retrieve:
    url: /search
    request: {query: "{question}", filter: {collection: "{corpora}"}}
    response:
      contexts: hits
      context: {text: chunk, doc_id: meta.collection, source: meta.path, score: similarity}
"""


def _project(tmp_path: Path, mapping: str) -> Path:
    port = free_port()
    write(tmp_path / "questions.yml", QUESTIONS)
    return write(
        tmp_path / "rag-ci.yml",
        (
            "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
            "metrics: {hit_at_k: {k: 5, threshold: 1.0}, keyword_coverage: {threshold: 0.6}}\n"
            f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/answer\n  health: /health\n"
            f"  start: [{sys.executable}, {FAKES / 'split_api_rag.py'}, '{port}']\n  pass_env: [SPLIT_API_LEAK, SPLIT_API_ECHO, SPLIT_API_TOKEN]\n"
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


def test_the_search_calls_contexts_are_scored_with_the_answer_calls_answer(tmp_path):
    result = _run(_project(tmp_path, ANSWER + RETRIEVE), tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert [q["verdict"] for q in run["questions"]] == ["pass", "pass", "pass"]
    q3 = run["questions"][2]
    assert [(c["doc_id"], c["source"], c["score"]) for c in q3["contexts"]] == [
        ("a", "a/x.md", 0.9),
        ("b", "b/y.md", 0.9),
    ]
    assert q3["metrics"]["hit_at_k"]["score"] == 1.0


def test_a_get_search_call_sends_the_request_as_query_parameters(tmp_path):
    get = RETRIEVE.replace("url: /search", "url: /search\n    method: GET").replace(
        'request: {query: "{question}", filter: {collection: "{corpora}"}}',
        'request: {q: "{question}", collection: "{corpora}"}',
    )
    result = _run(_project(tmp_path, ANSWER + get), tmp_path / "r.json", env={"SPLIT_API_LEAK": "1"})
    assert result.exit_code == 1, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert [c["doc_id"] for c in run["questions"][2]["contexts"]] == ["a", "b", "other"]
    assert run["questions"][2]["leaks"] == ["other"]


def test_a_routing_leak_is_caught_through_the_search_call(tmp_path):
    result = _run(_project(tmp_path, ANSWER + RETRIEVE), tmp_path / "r.json", env={"SPLIT_API_LEAK": "1"})
    assert result.exit_code == 1, result.output  # a leak gates, with no baseline too
    run = json.loads((tmp_path / "r.json").read_text())
    assert {q["verdict"] for q in run["questions"]} == {"routing_error"}
    assert run["questions"][0]["leaks"] == ["other"]


def test_a_credential_in_the_search_reply_is_redacted_like_the_answer_calls(tmp_path):
    token = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"
    result = _run(
        _project(tmp_path, ANSWER + RETRIEVE),
        tmp_path / "r.json",
        env={"SPLIT_API_ECHO": "1", "SPLIT_API_TOKEN": token},
    )
    assert result.exit_code == 0, result.output
    written = (tmp_path / "r.json").read_text()
    assert token not in written and "token ***" in written


def test_answer_only_the_leak_goes_unseen_and_retrieval_metrics_fail_for_want_of_contexts(tmp_path):
    """The answer-only mode docs/targets.md describes: no contexts, so no leak check and no hit@k."""
    result = _run(_project(tmp_path, ANSWER), tmp_path / "r.json", env={"SPLIT_API_LEAK": "1"})
    run = json.loads((tmp_path / "r.json").read_text())
    assert all(q["contexts"] == [] and not q.get("leaks") for q in run["questions"]), result.output
    assert "routing_error" not in {q["verdict"] for q in run["questions"]}
    assert [q["metrics"]["hit_at_k"]["score"] for q in run["questions"]] == [0.0, 0.0, 0.0]
    assert [q["verdict"] for q in run["questions"]] == ["fail", "fail", "fail"]  # hit@k, for want of contexts


def test_a_failing_search_call_is_a_target_error_naming_the_search_call(tmp_path):
    wrong = RETRIEVE.replace("filter: {collection:", "where: {collection:")
    result = _run(
        _project(tmp_path, ANSWER + wrong + "  max_errors_at_start: 2\n  concurrency: 1\n"),
        tmp_path / "r.json",
    )
    assert result.exit_code == 2, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["questions"][0]["error"].startswith("search call answered HTTP 422")


def test_a_search_reply_that_does_not_fit_names_the_retrieve_expression(tmp_path):
    wrong = RETRIEVE.replace("contexts: hits", "contexts: hits[0]")
    result = _run(
        _project(tmp_path, ANSWER + wrong + "  max_errors_at_start: 2\n  concurrency: 1\n"),
        tmp_path / "r.json",
    )
    assert result.exit_code == 2, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["questions"][0]["error"].startswith(
        "malformed response: target.retrieve.response.contexts `hits[0]` found a dict"
    )


@pytest.mark.parametrize(
    "retrieve, message",
    [
        (
            RETRIEVE.replace("url: /search", "url: /search\n    method: GET"),
            "target.retrieve: method GET sends `request` as query parameters",
        ),
        (
            RETRIEVE.replace('"{question}"', '"{query}"'),
            "target.retrieve.request: unknown placeholder {query}",
        ),
        (
            RETRIEVE.replace("contexts: hits", "contexts: hits[?"),
            "target.retrieve.response.contexts: not a JMESPath expression",
        ),
    ],
)
def test_a_bad_retrieve_mapping_is_a_config_error_with_file_and_line(tmp_path, retrieve, message):
    config = _project(tmp_path, ANSWER + retrieve)
    result = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert f"{config}:" in result.output and message in result.output, result.output


def test_a_docker_target_takes_the_same_retrieve_call_on_its_container():
    from rag_ci.core.config import parse_config
    from rag_ci.targets.http import HttpTarget, mapping_arguments

    config = parse_config(
        "questions: q.yml\ncorpora: {a: {}}\ntarget:\n  kind: docker\n  port: 8000\n  path: /answer\n"
        + ANSWER
        + RETRIEVE,
        "rag-ci.yml",
    )
    arguments = mapping_arguments(config.target)
    assert arguments["retrieve"]["response"]["contexts"] == "hits"
    # as DockerTarget points it at the container
    http = HttpTarget("http://172.17.0.2:8000/answer", timeout_s=5, **arguments)
    assert http.retrieve_url == "http://172.17.0.2:8000/search"


def test_a_search_reply_without_the_mapped_key_is_each_questions_error_not_empty_contexts(tmp_path):
    """Before: the search's `hits` renamed (here the mapping expects `results`) gave every
    question empty contexts and plain misses, with no word of target.retrieve.response."""
    renamed = RETRIEVE.replace("contexts: hits", "contexts: results")
    result = _run(
        _project(tmp_path, ANSWER + renamed + "  max_errors_at_start: 2\n  concurrency: 1\n"),
        tmp_path / "r.json",
    )
    assert result.exit_code == 2, result.output
    error = json.loads((tmp_path / "r.json").read_text())["questions"][0]["error"]
    assert error.startswith(
        "malformed response: target.retrieve.response.contexts `results` found nothing"
    ), error
    assert 'the reply has no key "results" (its keys: "hits")' in error, error
