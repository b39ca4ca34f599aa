"""The OTLP/HTTP wire format (protobuf `ExportTraceServiceRequest`) decoded into the core's `Span`s.

The body is untrusted: its size is bounded before decoding (and after gunzip), and each text
value is cut; what is kept is bounded again by rag_ci.core.traces.spans.
"""

from __future__ import annotations

import gzip
import zlib
from typing import Any

from rag_ci.core.traces.spans import MAX_TEXT, Span, SpanEvent
from rag_ci.errors import RagCiError

MAX_BODY = 16 * 1024 * 1024  # bytes of one export request, compressed or not
MAX_VALUES = 1000  # items of one array or key-value list attribute


def load_proto() -> tuple[Any, Any]:
    """The request and response messages of the OTLP trace service: the `otel` extra's."""
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError:
        raise RagCiError(
            "target.traces: otlp needs the OTLP protobuf messages: pip install 'rag-ci-gate[otel]'"
        ) from None
    return trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse


def unpack(body: bytes, encoding: str) -> bytes:
    """The body without its content encoding (gzip, deflate or none), bounded to MAX_BODY."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise ValueError(f"unsupported Content-Encoding {encoding[:40]!r}")
    inflate = zlib.decompressobj(wbits=31 if encoding == "gzip" else 15)
    try:
        plain = inflate.decompress(body, MAX_BODY + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"the body is not {encoding}: {exc}") from None
    if len(plain) > MAX_BODY or inflate.unconsumed_tail:
        raise ValueError(f"the body is over {MAX_BODY} bytes once decompressed")
    return plain


def decode_spans(body: bytes, request_type: Any) -> list[Span]:
    """The spans of one export request (ValueError: not a trace export)."""
    message = request_type()
    try:
        message.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError, and anything its parser raises on garbage
        raise ValueError(f"not an OTLP trace export: {type(exc).__name__}") from None
    return [
        Span(
            trace_id=span.trace_id.hex(),
            span_id=span.span_id.hex(),
            parent_span_id=span.parent_span_id.hex(),
            name=span.name[:200],
            start_ns=span.start_time_unix_nano,
            end_ns=span.end_time_unix_nano,
            attributes=_attributes(span.attributes),
            events=tuple(
                SpanEvent(e.name[:200], _attributes(e.attributes)) for e in span.events[:MAX_VALUES]
            ),
        )
        for resource_spans in message.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key[:200]: _value(pair.value) for pair in list(pairs)[:MAX_VALUES]}


def _value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value[: MAX_TEXT * 5]  # a JSON list of documents is longer than one
    if which in ("bool_value", "int_value", "double_value"):
        return getattr(value, which)
    if which == "array_value":
        return [_value(v) for v in value.array_value.values[:MAX_VALUES]]
    if which == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return None  # bytes and empty values: nothing rag-ci reads
