"""A RAG that names corpora and documents its own way (`data/<corpus>/...`, a filter
expression instead of a list) is matched by config alone: rag-ci's JMESPath
string functions read its sources, `each_corpus` builds its filter.

The app is tests/fakes/data_folder_rag.py, a real HTTP server shaped like Pathway's
llm-app template, which refuses any other request shape.
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
  request:
    prompt: "{question}"
    filters: {each_corpus: "globmatch('data/{corpus}/**', path)", join: " || "}
    return_context_docs: true
  response:
    answer: response
    contexts: context_docs
    context:
      text: text
      doc_id: "split(metadata.path, '/')[1]"
      source: "strip_prefix(metadata.path, 'data/')"
      score: dist
"""


def _project(tmp_path: Path, mapping: str = MAPPING) -> Path:
    port = free_port()
    write(tmp_path / "questions.yml", QUESTIONS)
    return write(
        tmp_path / "rag-ci.yml",
        (
            "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
            "metrics: {hit_at_k: {k: 5}, source_recall: {}, keyword_coverage: {threshold: 0.6}}\n"
            f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/v2/answer\n  health: /health\n"
            f"  start: [{sys.executable}, {FAKES / 'data_folder_rag.py'}, '{port}']\n  pass_env: [DATA_RAG_LEAK]\n"
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


def test_a_rag_reporting_data_corpus_sources_is_matched_by_config_alone(tmp_path):
    result = _run(_project(tmp_path), tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "r.json").read_text())
    assert [q["verdict"] for q in run["questions"]] == ["pass", "pass", "pass"]
    q3 = run["questions"][2]
    assert [(c["doc_id"], c["source"]) for c in q3["contexts"]] == [("a", "a/x.md"), ("b", "b/y.md")]
    assert {m: s["score"] for m, s in q3["metrics"].items() if m in ("hit_at_k", "source_recall")} == {
        "hit_at_k": 1.0,
        "source_recall": 1.0,
    }


def test_the_corpus_read_from_the_apps_path_shows_its_routing_leak(tmp_path):
    result = _run(_project(tmp_path), tmp_path / "r.json", env={"DATA_RAG_LEAK": "1"})
    run = json.loads((tmp_path / "r.json").read_text())
    assert {q["verdict"] for q in run["questions"]} == {"routing_error"}, result.output
    assert run["questions"][0]["leaks"] == ["other"]


def test_without_the_string_functions_the_apps_naming_misses_every_source(tmp_path):
    plain = MAPPING.replace("\"strip_prefix(metadata.path, 'data/')\"", "metadata.path")
    _run(_project(tmp_path, plain), tmp_path / "r.json")
    run = json.loads((tmp_path / "r.json").read_text())
    assert run["questions"][0]["contexts"][0]["source"] == "data/a/x.md"
    assert run["questions"][0]["metrics"]["hit_at_k"]["score"] == 0.0


@pytest.mark.parametrize(
    "old, new, line, message",
    [
        (
            "split(metadata.path",
            "splitt(metadata.path",
            20,
            "target.response.context.doc_id: unknown function splitt(); rag-ci's own: strip_prefix(s, prefix)",
        ),
        (
            "strip_prefix(metadata.path, 'data/')",
            "strip_prefix(metadata.path)",
            21,
            "target.response.context.source: strip_prefix() takes 2 argument(s), got 1",
        ),
        ('join: " || "', "join: 3", 11, "target.request: each_corpus: `join` is the separator"),
        (
            "globmatch('data/{corpus}/**', path)",
            "globmatch('data/{corpora}/**', path)",
            11,
            "target.request: each_corpus: the template never names {corpus}",
        ),
        (
            'prompt: "{question}"',
            'prompt: "{question} in {corpus}"',
            11,
            "target.request: unknown placeholder {corpus} in '{question} in {corpus}'",
        ),
    ],
)
def test_a_bad_function_or_corpus_template_is_a_config_error_with_file_and_line(
    tmp_path, old, new, line, message
):
    config = _project(tmp_path, mapping=MAPPING.replace(old, new))
    result = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert f"{config}:{line}: {message}" in result.output, result.output


def test_an_http_targets_start_command_runs_in_the_configs_folder_and_without_health_the_url_is_polled(
    tmp_path, monkeypatch
):
    """docs/targets.md: `start` runs in rag-ci.yml's folder (a relative script path works from any
    folder), and with no `health:` the server is up once `url` answers a GET below 500."""
    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    for name in ("data_folder_rag.py", "http_rag.py"):
        (project / "app" / name).write_text((FAKES / name).read_text())
    config = _project(project)
    text = config.read_text()
    text = text.replace("  health: /health\n", "").replace(
        str(FAKES / "data_folder_rag.py"), "app/data_folder_rag.py"
    )
    config.write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = _run(Path("..") / "project" / "rag-ci.yml", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    assert [q["verdict"] for q in json.loads((tmp_path / "r.json").read_text())["questions"]] == [
        "pass",
        "pass",
        "pass",
    ]
