"""An OTLP/HTTP trace receiver on the loopback, for one run (docs/traces.md).

The RAG's exporter POSTs protobuf `ExportTraceServiceRequest`s to `/v1/traces`. Only the traces
rag-ci is waiting for are kept (`expect` before the question is sent, `forget` once read), each
bounded in spans: a RAG that traces other work, or floods the port, costs no memory. It runs in
a thread of its own (the standard library's HTTP server), so the exporter is answered while the
event loop is busy; the run waits on it with `wait`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rag_ci.core.traces.spans import Span
from rag_ci.targets.traces.forward import Forwarder
from rag_ci.targets.traces.otlp_decode import MAX_BODY, decode_spans, load_proto, unpack

MAX_SPANS = 2000  # spans kept for one trace
POLL_S = 0.02


class OtlpReceiver:
    """Binds at once (the port is known before the target starts); `close` when the run ends."""

    def __init__(self, host: str = "127.0.0.1", forward: Forwarder | None = None) -> None:
        self._request_type, response_type = load_proto()
        self._response = response_type().SerializeToString()
        self._lock = threading.Lock()
        self._traces: dict[str, list[Span]] = {}
        self.received = 0  # spans decoded, kept or not: tells "nothing arrives" from "not ours"
        self.refused: list[str] = []  # the last reasons export requests were refused
        self.forwarder = forward  # the team's own collector, sent every export accepted
        self._server = ThreadingHTTPServer((host, 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="rag-ci-otlp", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def expect(self, trace_id: str) -> None:
        with self._lock:
            self._traces.setdefault(trace_id, [])

    def forget(self, trace_id: str) -> None:
        with self._lock:
            self._traces.pop(trace_id, None)

    def spans(self, trace_id: str) -> list[Span]:
        with self._lock:
            return list(self._traces.get(trace_id, ()))

    async def wait(self, trace_id: str, parent_span_id: str, wait_s: float) -> list[Span]:
        """The trace's spans once the RAG's own root span (the child of rag-ci's request span)
        has arrived, or what arrived within `wait_s` (maybe nothing)."""
        deadline = time.monotonic() + wait_s
        while True:
            spans = self.spans(trace_id)
            if any(s.parent_span_id == parent_span_id for s in spans) or time.monotonic() >= deadline:
                return spans
            await asyncio.sleep(POLL_S)

    def accept(self, body: bytes, encoding: str) -> None:
        """Keep the spans of the traces waited for (ValueError: not a trace export)."""
        spans = decode_spans(unpack(body, encoding), self._request_type)
        with self._lock:
            self.received += len(spans)
            for span in spans:
                kept = self._traces.get(span.trace_id)
                if kept is not None and len(kept) < MAX_SPANS:
                    kept.append(span)

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.refused = [*self.refused[-4:], reason]

    def close(self) -> None:
        """Stop listening (again: nothing)."""
        if not self._thread.is_alive():
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        if self.forwarder is not None:
            self.forwarder.close()


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            if self.path.split("?")[0].rstrip("/") != "/v1/traces":
                return self._answer(404, b"rag-ci receives traces only, at /v1/traces")
            length = int(self.headers.get("Content-Length") or -1)
            if not 0 <= length <= MAX_BODY:
                receiver.refuse(f"a body of {length} bytes (at most {MAX_BODY}, with a Content-Length)")
                self.close_connection = True
                return self._answer(413, b"body too large or without Content-Length")
            body = self.rfile.read(length)
            kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if kind != "application/x-protobuf":
                receiver.refuse(f"Content-Type {kind[:60]!r} (OTLP/HTTP protobuf only: http/protobuf)")
                return self._answer(415, b"rag-ci takes OTLP/HTTP protobuf (application/x-protobuf)")
            encoding = self.headers.get("Content-Encoding") or ""
            try:
                receiver.accept(body, encoding)
            except ValueError as exc:
                receiver.refuse(str(exc)[:200])
                return self._answer(400, str(exc)[:200].encode())
            if receiver.forwarder is not None:
                receiver.forwarder.forward(body, kind, encoding)
            self._answer(200, receiver._response, "application/x-protobuf")

        def _answer(self, status: int, body: bytes, kind: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the RAG's exports are not rag-ci's log."""

    return Handler
