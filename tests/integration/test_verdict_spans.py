"""The verdicts exported as spans in each question's own trace, when rag-ci's own environment
names an OTLP endpoint (rag_ci.run.verdict_spans), received by rag-ci's own OTLP receiver as a
collector: the real wire format both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("opentelemetry.proto")

from rag_ci.cli import cli
from rag_ci.files.results_file import load_results
from rag_ci.run.verdict_spans import export_verdicts
from rag_ci.targets.traces.receiver import OtlpReceiver

PYTHON_TARGET = "target: {kind: python, entry: 'tiny_rag:answer', path: ['%s'], generator_family: tiny}\n"


@pytest.fixture
def collector():
    receiver = OtlpReceiver()
    yield receiver
    receiver.close()


def _run(tiny_project, tmp_path, env):
    fakes = Path(__file__).resolve().parents[1] / "fakes"
    config = tiny_project(PYTHON_TARGET % fakes)
    done = CliRunner().invoke(
        cli, ["run", "--config", str(config), "-o", str(tmp_path / "r.json"), "--no-progress"], env=env
    )
    assert done.exit_code == 0, done.output
    return done, load_results(tmp_path / "r.json")


def test_a_run_exports_one_span_per_question_when_otel_exporter_otlp_endpoint_is_set(
    tiny_project, tmp_path, collector
):
    done, result = _run(tiny_project, tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint})
    assert collector.received == len(result.questions) > 0
    assert f"exported {len(result.questions)} verdict spans" in done.output


def test_each_span_is_the_questions_request_span_with_an_evaluation_event_per_metric(
    tiny_project, tmp_path, collector
):
    _, result = _run(tiny_project, tmp_path, {})
    for question in result.questions:
        collector.expect(question.trace_id)
    export_verdicts(result, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{collector.endpoint}/v1/traces"})
    question = result.questions[0]
    (span,) = collector.spans(question.trace_id)
    assert question.request["traceparent"] == f"00-{span.trace_id}-{span.span_id}-01"
    assert span.attributes["rag_ci.question.id"] == question.id
    assert span.attributes["rag_ci.verdict"] == question.verdict
    events = {e.attributes["gen_ai.evaluation.name"]: e.attributes for e in span.events}
    assert set(events) == set(question.metrics)
    for name, metric in question.metrics.items():
        assert events[name].get("gen_ai.evaluation.score.value") == metric.score
        if metric.passed is not None:
            assert events[name]["gen_ai.evaluation.score.label"] == ("pass" if metric.passed else "fail")


def test_an_unreachable_collector_costs_a_warning_not_the_run(tiny_project, tmp_path, collector):
    endpoint = collector.endpoint
    collector.close()  # nothing listens there any more
    done, _ = _run(tiny_project, tmp_path, {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    assert "the verdict spans could not be exported" in done.output
