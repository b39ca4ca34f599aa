"""A target whose contexts, generator usage and stage times come from its own spans
(`target.traces: otlp`, docs/traces.md).

Wraps the kind's runner: each question's trace id (its `traceparent`) is awaited at the receiver
once the answer is in; the spans' retrieved documents replace the reply's contexts (what the LLM
was given, not what a separate search call returns), their model and tokens fill `usage`, and the
stage times go with the reply. A question whose spans never arrive is an error naming
`target.traces`, never a pass with no contexts.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from rag_ci.core.traces.context import parse_traceparent
from rag_ci.core.traces.spans import TraceReading, read_trace
from rag_ci.errors import TargetError
from rag_ci.safety.logsafe import neutralise
from rag_ci.targets.base import STAGES_KEY, ArrivedReply, Target, arrived
from rag_ci.targets.traces.receiver import OtlpReceiver

NO_RETRIEVER = (
    "[rag-ci] target.traces: the RAG's trace has no retriever span rag-ci can read, so its contexts "
    "come from its replies. Instrument the retriever with OpenInference (span kind RETRIEVER, "
    "retrieval.documents.N.document.*) or OpenLLMetry (vector-DB db.query.result events): docs/traces.md"
)


class TracedTarget:
    def __init__(self, inner: Target, receiver: OtlpReceiver, *, wait_s: float, corpus_key: str):
        self.inner = inner
        self.receiver = receiver
        self.wait_s = wait_s
        self.corpus_key = corpus_key
        self._told_no_retriever = False

    @property
    def max_parallel(self) -> int | None:
        return self.inner.max_parallel

    async def start(self) -> None:
        await self.inner.start()

    async def query(self, request: dict[str, Any]) -> dict[str, Any] | ArrivedReply:
        ids = parse_traceparent(request.get("traceparent"))
        if ids is None:  # not sent by rag-ci's replay (a tool's own call): nothing to wait for
            return await self.inner.query(request)
        trace_id, span_id = ids
        self.receiver.expect(trace_id)
        try:
            reply, arrived_at = arrived(await self.inner.query(request))
            waited = time.perf_counter()
            spans = await self.receiver.wait(trace_id, span_id, self.wait_s)
        finally:
            self.receiver.forget(trace_id)
        if not spans:
            raise TargetError(self._no_spans(trace_id, time.perf_counter() - waited))
        if isinstance(reply, dict):
            self._merge(reply, read_trace(spans))
        return ArrivedReply(reply, arrived_at)

    def _merge(self, reply: dict[str, Any], reading: TraceReading) -> None:
        if reading.retrievers:
            reply["contexts"] = reading.contexts(self.corpus_key)
        elif not self._told_no_retriever:
            self._told_no_retriever = True
            print(neutralise(NO_RETRIEVER), file=sys.stderr, flush=True)
        given = reply.get("usage")
        usage: dict[str, Any] = given if isinstance(given, dict) else {}
        spanned = {
            "model": reading.model,
            "input_tokens": reading.input_tokens,
            "output_tokens": reading.output_tokens,
            "cost_usd": reading.cost_usd,
        }
        merged = {**usage, **{k: v for k, v in spanned.items() if v is not None}}
        if merged:
            reply["usage"] = merged
        reply[STAGES_KEY] = dict(reading.stages)

    def _no_spans(self, trace_id: str, waited: float) -> str:
        why = (
            f"the receiver refused its exports: {self.receiver.refused[-1]}"
            if self.receiver.refused
            else "spans of other traces arrived: does the RAG continue the request's traceparent?"
            if self.receiver.received
            else "nothing arrived at all: does the RAG export OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT?"
        )
        return (
            f"target.traces: no span of trace {trace_id} arrived within {waited:.1f}s of the answer "
            f"(target.traces_wait_s); {why}"
        )

    async def stop(self) -> None:
        try:
            await self.inner.stop()
        finally:
            self.receiver.close()
            forwarded = self.receiver.forwarder
            if forwarded is not None and forwarded.dropped:
                total = forwarded.sent + forwarded.dropped
                print(
                    neutralise(
                        f"[rag-ci] target.traces: {forwarded.dropped} of {total} span exports could not be "
                        f"passed on to {forwarded.endpoint}"
                    ),
                    file=sys.stderr,
                    flush=True,
                )

    def diagnostics(self) -> str:
        return self.inner.diagnostics()
