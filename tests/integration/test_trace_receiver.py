"""rag-ci's OTLP/HTTP trace receiver on the wire (rag_ci.targets.traces.receiver): protobuf in,
the traces waited for kept, everything else refused or dropped, bounded."""

from __future__ import annotations

import asyncio
import gzip

import httpx
import pytest

pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from rag_ci.targets.traces.otlp_decode import MAX_BODY
from rag_ci.targets.traces.receiver import OtlpReceiver

TRACE = "ab" * 16
OTHER = "cd" * 16
PARENT = "11" * 8


def export(trace_id: str, span_id: str, parent: str, **attributes: object) -> bytes:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.parent_span_id = (bytes.fromhex(x) for x in (trace_id, span_id, parent))
    span.name, span.start_time_unix_nano, span.end_time_unix_nano = "retrieve", 1_000, 2_000
    for key, value in attributes.items():
        kv = span.attributes.add(key=key)
        if isinstance(value, int):
            kv.value.int_value = value
        elif isinstance(value, list):
            kv.value.array_value.values.add().string_value = value[0]
        else:
            kv.value.string_value = str(value)
    return request.SerializeToString()


@pytest.fixture
def receiver():
    receiver = OtlpReceiver()
    yield receiver
    receiver.close()


def post(receiver: OtlpReceiver, body: bytes, **headers: str) -> httpx.Response:
    kind = {"Content-Type": "application/x-protobuf"}
    return httpx.post(f"{receiver.endpoint}/v1/traces", content=body, headers={**kind, **headers}, timeout=10)


def test_the_spans_of_an_awaited_trace_are_kept_others_dropped(receiver):
    receiver.expect(TRACE)
    answered = post(
        receiver, export(TRACE, "22" * 8, "33" * 8, **{"openinference.span.kind": "RETRIEVER", "n": 3})
    )
    assert answered.status_code == 200 and answered.headers["content-type"] == "application/x-protobuf"
    ExportTraceServiceResponse().ParseFromString(answered.content)  # the reply the exporter expects
    assert post(receiver, export(OTHER, "22" * 8, PARENT)).status_code == 200
    (span,) = receiver.spans(TRACE)
    assert span.attributes == {"openinference.span.kind": "RETRIEVER", "n": 3}
    assert receiver.spans(OTHER) == [] and receiver.received == 2


def test_wait_returns_once_the_rags_root_span_arrives(receiver):
    receiver.expect(TRACE)

    async def scenario():
        waiting = asyncio.ensure_future(receiver.wait(TRACE, PARENT, wait_s=60))
        await asyncio.to_thread(post, receiver, export(TRACE, "22" * 8, "33" * 8))  # a child: not yet
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await asyncio.to_thread(post, receiver, export(TRACE, "33" * 8, PARENT))  # the RAG's root span
        return await waiting

    assert [s.span_id for s in asyncio.run(scenario())] == ["22" * 8, "33" * 8]


def test_gzip_bodies_are_read(receiver):
    receiver.expect(TRACE)
    assert (
        post(
            receiver, gzip.compress(export(TRACE, "22" * 8, PARENT)), **{"Content-Encoding": "gzip"}
        ).status_code
        == 200
    )
    assert len(receiver.spans(TRACE)) == 1


def test_json_garbage_and_bombs_are_refused_with_the_reason_kept(receiver):
    receiver.expect(TRACE)
    json_export = httpx.post(
        f"{receiver.endpoint}/v1/traces",
        content=b"{}",
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert json_export.status_code == 415 and "http/protobuf" in receiver.refused[-1]
    assert post(receiver, b"\xff\xfe not protobuf").status_code == 400
    bomb = gzip.compress(b"\0" * (MAX_BODY + 10))
    assert post(receiver, bomb, **{"Content-Encoding": "gzip"}).status_code == 400
    assert "decompressed" in receiver.refused[-1]
    assert httpx.post(f"{receiver.endpoint}/v1/metrics", content=b"", timeout=10).status_code == 404
    assert receiver.spans(TRACE) == []


def test_a_trace_is_bounded_in_spans(receiver, monkeypatch):
    monkeypatch.setattr("rag_ci.targets.traces.receiver.MAX_SPANS", 2)
    receiver.expect(TRACE)
    for i in range(4):
        post(receiver, export(TRACE, f"{i + 40:016x}", PARENT))
    assert len(receiver.spans(TRACE)) == 2
