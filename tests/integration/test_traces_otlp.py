"""`target.traces: otlp` end to end: a LangChain RAG instrumented with OpenInference answers over
HTTP with the answer only, and exports its spans with the real OTLP/HTTP exporter to rag-ci's
receiver. What rag-ci scores comes from those spans: the documents the model was given (so a
pull request that drops the corpus filter in the answer path is caught as routing leaks, and a
top-k cut moves hit@k), the generator's model and tokens, each stage's time.

The RAG is tests/fakes/traced_langchain_rag.py: a real server, the real instrumentation package,
SDK and exporter; only its retriever and chat model are in-process fakes (no model, offline).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import free_port, write
from fakes.judge_setup import JUDGE_MODELS
from rag_ci.cli import cli

pytest.importorskip("openinference.instrumentation.langchain")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("opentelemetry.proto")

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay on CAN?, reference: The delay is 10 ms on CAN., doc_id: a, sources: [a/x.md]}
  - {id: Q2, question: What is the delay on LIN?, reference: The delay is 20 ms on LIN., doc_id: b, sources: [b/y.md]}
  - {id: OOS, question: Who is the CEO?, expect: refusal}
"""


def _project(tmp_path: Path, judge_url: str | None = None) -> Path:
    port = free_port()
    write(tmp_path / "questions.yml", QUESTIONS)
    judge = (
        f"judge: {{provider: openai, model: {JUDGE_MODELS['openai']}, base_url: '{judge_url}', backoff_s: 0.01}}\n"
        "metrics: {hit_at_k: {k: 3}, correctness: {}}\n"
        if judge_url
        else "metrics: {hit_at_k: {k: 3}}\n"
    )
    return write(
        tmp_path / "rag-ci.yml",
        "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        + judge
        + textwrap.dedent(f"""\
            target:
              kind: http
              url: http://127.0.0.1:{port}/query
              health: /health
              start: [{sys.executable}, {FAKES / "traced_langchain_rag.py"}, '{port}']
              pass_env: [TRACED_RAG_*]
              traces: otlp
              traces_wait_s: 60
              warmup: 1
            report: {{trace_url: "https://traces.example/trace/{{trace_id}}"}}
            """),
    )


def _run(config: Path, output: Path, *more: object, env: dict | None = None):
    return CliRunner().invoke(
        cli,
        ["run", "--config", str(config), "-o", str(output), "--no-progress", *map(str, more)],
        env={"OPENAI_API_KEY": "sk-fake", **(env or {})},
        catch_exceptions=False,
    )


def _compare(base: Path, head: Path, form: str) -> str:
    done = CliRunner().invoke(
        cli, ["compare", str(base), str(head), "--format", form], catch_exceptions=False
    )
    assert done.exit_code == 1, done.output
    return done.output


def test_contexts_model_tokens_and_stage_times_come_from_the_rags_own_spans(tmp_path):
    done = _run(_project(tmp_path), tmp_path / "r.json")
    assert done.exit_code == 0, done.output
    run = json.loads((tmp_path / "r.json").read_text())
    questions = {q["id"]: q for q in run["questions"]}
    q1 = questions["Q1"]
    # the reply had no contexts: these are the retriever span's documents, in its order
    assert [(c["doc_id"], c["source"]) for c in q1["contexts"]] == [("a", "a/faq.md#0"), ("a", "a/x.md#0")]
    assert q1["usage"]["model"] == "mistral-small-2409" and q1["usage"]["input_tokens"] > 0
    assert run["meta"]["generator_models"] == ["mistral-small-2409"]
    assert set(q1["stage_latency_s"]) == {"retrieval", "generation"}
    assert q1["request"]["traceparent"].startswith(f"00-{q1['trace_id']}-")
    assert len({q["trace_id"] for q in questions.values()}) == 3  # a fresh trace per question
    assert questions["OOS"]["contexts"] == [] and questions["OOS"]["verdict"] == "pass"


def test_a_pr_dropping_the_corpus_filter_is_caught_as_leaks_and_a_top_k_cut_moves_hit_at_k(
    tmp_path, fake_judge
):
    server = fake_judge("openai")
    config = _project(tmp_path, server.base_url)
    base = tmp_path / "base.json"
    assert (done := _run(config, base)).exit_code == 0, done.output
    cold = server.requests
    assert cold > 0

    # the same RAG again: green, every verdict from the cache
    again = _run(config, tmp_path / "again.json", "--baseline", base)
    assert again.exit_code == 0, again.output
    assert server.requests == cold

    # the answer path searches every corpus: the spans' documents show the leak
    leaky = _run(config, tmp_path / "leaky.json", "--baseline", base, env={"TRACED_RAG_FILTER": "off"})
    assert leaky.exit_code == 1, leaky.output
    q2 = {q["id"]: q for q in json.loads((tmp_path / "leaky.json").read_text())["questions"]}["Q2"]
    assert q2["verdict"] == "routing_error" and q2["leaks"] == ["a"]
    # the row links the question's trace in the team's tool; the latency line has each stage's
    md = _compare(base, tmp_path / "leaky.json", "md")
    assert f"[trace](https://traces.example/trace/{q2['trace_id']})" in md
    assert "retrieval p50" in md and "generation p50" in md
    assert f'href="https://traces.example/trace/{q2["trace_id"]}"' in _compare(
        base, tmp_path / "leaky.json", "html"
    )

    # one document handed to the model: the right chunk ranked second is gone
    cut = _run(config, tmp_path / "cut.json", "--baseline", base, env={"TRACED_RAG_TOP_K": "1"})
    assert cut.exit_code == 1, cut.output
    q1 = {q["id"]: q for q in json.loads((tmp_path / "cut.json").read_text())["questions"]}["Q1"]
    assert q1["metrics"]["hit_at_k"]["passed"] is False
    assert [c["source"] for c in q1["contexts"]] == ["a/faq.md#0"]


def test_a_question_whose_spans_never_arrive_is_an_error_naming_target_traces(tmp_path):
    config = _project(tmp_path)
    config.write_text(config.read_text().replace("traces_wait_s: 60", "traces_wait_s: 0.5"))
    done = _run(config, tmp_path / "r.json", env={"TRACED_RAG_EXPORT": "off"})
    assert done.exit_code == 2, done.output  # every question errored: a broken run, not a pass
    for question in json.loads((tmp_path / "r.json").read_text())["questions"]:
        error = question["error"]
        assert error.startswith(f"target.traces: no span of trace {question['trace_id']} arrived"), error
        assert "nothing arrived at all" in error


def test_a_rag_with_no_retriever_span_is_told_once_and_keeps_its_replies_contexts(tmp_path):
    done = _run(_project(tmp_path), tmp_path / "r.json", env={"TRACED_RAG_RETRIEVER_SPAN": "off"})
    said = done.output  # stdout and stderr, as the user sees them
    assert said.count("target.traces: the RAG's trace has no retriever span") == 1, said
    run = json.loads((tmp_path / "r.json").read_text())
    q1 = {q["id"]: q for q in run["questions"]}["Q1"]
    assert q1["contexts"] == [] and q1["usage"]["model"] == "mistral-small-2409"
    assert set(q1["stage_latency_s"]) == {"generation"}


def test_a_pr_swapping_the_generator_to_the_judges_family_is_refused_from_the_spans_model(
    tmp_path, fake_judge
):
    server = fake_judge("openai")
    done = _run(
        _project(tmp_path, server.base_url), tmp_path / "r.json", env={"TRACED_RAG_MODEL": "gpt-4o-mini"}
    )
    assert done.exit_code == 2, done.output
    assert "gpt-4o-mini" in done.output and "family" in done.output


def test_the_rags_spans_and_the_verdicts_reach_the_teams_own_collector_too(tmp_path):
    from rag_ci.targets.traces.receiver import OtlpReceiver

    collector = OtlpReceiver()  # the team's collector, named in rag-ci's own environment
    try:
        done = _run(
            _project(tmp_path), tmp_path / "r.json", env={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        )
        assert done.exit_code == 0, done.output
        questions = json.loads((tmp_path / "r.json").read_text())["questions"]
        # the verdicts are one span per question; the rest are the RAG's own, passed on
        assert collector.received > len(questions)
        assert f"exported {len(questions)} verdict spans" in done.output
    finally:
        collector.close()
