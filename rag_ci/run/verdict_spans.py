"""The verdicts as OpenTelemetry spans, in each question's own trace (docs/traces.md, "Verdicts
in your tracing tool").

Opt-in: with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set for
rag-ci itself and the `otel` extra installed, a finished run sends one span per question to that
collector over OTLP/HTTP (protobuf): the span of rag-ci's request, whose id the question's
`traceparent` named (so the RAG's own spans hang under it), with the verdict, and one
`gen_ai.evaluation.result` event per metric (the GenAI semantic conventions' evaluation event:
`gen_ai.evaluation.name`, `.score.value`, `.score.label`, `.explanation`). Headers from
`OTEL_EXPORTER_OTLP_HEADERS`. A collector that cannot be reached costs a warning, never the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import httpx

from rag_ci.core.results import QuestionResult, RunResult
from rag_ci.core.traces.context import parse_traceparent
from rag_ci.core.traces.otlp_env import traces_endpoint, traces_headers
from rag_ci.safety.logsafe import neutralise

TIMEOUT_S = 10.0


def export_verdicts(result: RunResult, environ: Mapping[str, str] | None = None) -> None:
    environ = os.environ if environ is None else environ
    endpoint = traces_endpoint(environ)
    if endpoint is None or not result.questions:
        return
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        _say(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but the verdicts are not exported: pip install 'rag-ci-gate[otel]'"
        )
        return
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    _attribute(resource_spans.resource.attributes, "service.name", "rag-ci")
    scope = resource_spans.scope_spans.add()
    scope.scope.name = "rag_ci"
    times = _times(result)
    spans = [q for q in result.questions if parse_traceparent(q.request.get("traceparent"))]
    for question in spans:
        _question_span(scope.spans.add(), question, times)
    headers = {
        "Content-Type": "application/x-protobuf",
        **traces_headers(environ),
    }
    try:
        response = httpx.post(
            endpoint, content=request.SerializeToString(), headers=headers, timeout=TIMEOUT_S
        )
        response.raise_for_status()
    except httpx.HTTPError as exc:
        _say(f"the verdict spans could not be exported to {endpoint}: {type(exc).__name__}")
        return
    _say(f"exported {len(spans)} verdict span{'s' if len(spans) != 1 else ''} to {endpoint}")


def _question_span(span: Any, question: QuestionResult, times: tuple[int, int]) -> None:
    ids = parse_traceparent(question.request.get("traceparent"))
    assert ids is not None
    span.trace_id, span.span_id = bytes.fromhex(ids[0]), bytes.fromhex(ids[1])
    span.name = f"rag-ci question {question.id}"[:200]
    span.kind = 3  # SPAN_KIND_CLIENT: rag-ci's request to the RAG
    span.start_time_unix_nano, span.end_time_unix_nano = times
    for key, value in (
        ("rag_ci.question.id", question.id),
        ("rag_ci.verdict", question.verdict),
        ("rag_ci.error", question.error),
        ("rag_ci.latency_s", question.latency_s),
    ):
        _attribute(span.attributes, key, value)
    for name, metric in question.metrics.items():
        event = span.events.add()
        event.name = "gen_ai.evaluation.result"
        event.time_unix_nano = times[1]
        label = None if metric.passed is None else "pass" if metric.passed else "fail"
        for key, value in (
            ("gen_ai.evaluation.name", name),
            ("gen_ai.evaluation.score.value", metric.score),
            ("gen_ai.evaluation.score.label", label),
            ("gen_ai.evaluation.explanation", (metric.error or metric.reason or None)),
        ):
            _attribute(event.attributes, key, value)


def _attribute(attributes: Any, key: str, value: Any) -> None:
    if value is None:
        return
    kv = attributes.add(key=key)
    if isinstance(value, bool):
        kv.value.bool_value = value
    elif isinstance(value, int):
        kv.value.int_value = value
    elif isinstance(value, float):
        kv.value.double_value = value
    else:
        kv.value.string_value = str(value)[:2000]


def _times(result: RunResult) -> tuple[int, int]:
    """The run's start and end, in ns: when each question was asked is not recorded."""
    start = datetime.fromisoformat(result.meta.started_at)
    end = datetime.fromisoformat(result.meta.finished_at) if result.meta.finished_at else start
    return int(start.timestamp() * 1e9), int(end.timestamp() * 1e9)


def _say(line: str) -> None:
    print(neutralise(f"[rag-ci] {line}"), file=sys.stderr, flush=True)
