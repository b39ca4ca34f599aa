"""The RAG's spans passed on to the team's own collector, when rag-ci's environment names one
(`OTEL_EXPORTER_OTLP_ENDPOINT`/`_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`): with
`target.traces: otlp` the RAG exports to rag-ci, and its traces still reach the team's tool.

Each export request the receiver accepted is sent on as it came (same body, encoding and type),
from one thread of its own, so the RAG's exporter is answered without waiting for the collector.
Bounded: at most QUEUE requests wait; past it, or when the collector fails, requests are dropped
and counted (a slow collector never slows the run, and never fails it).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Mapping

import httpx

QUEUE = 256
TIMEOUT_S = 10.0
CLOSE_S = 15.0  # how long the end of the run waits for the exports still queued


class Forwarder:
    def __init__(self, endpoint: str, headers: Mapping[str, str]):
        self.endpoint = endpoint
        self.headers = dict(headers)
        self.sent = 0
        self.dropped = 0
        self._queue: queue.Queue[tuple[bytes, dict[str, str]] | None] = queue.Queue(QUEUE)
        self._thread = threading.Thread(target=self._send_all, name="rag-ci-otlp-forward", daemon=True)
        self._thread.start()

    def forward(self, body: bytes, content_type: str, encoding: str) -> None:
        headers = {**self.headers, "Content-Type": content_type}
        if encoding:
            headers["Content-Encoding"] = encoding
        try:
            self._queue.put_nowait((body, headers))
        except queue.Full:
            self.dropped += 1

    def close(self) -> None:
        """Send what waits, for at most CLOSE_S more (the rest is dropped), then stop."""
        try:
            self._queue.put(None, timeout=CLOSE_S)
        except queue.Full:
            pass
        self._thread.join(CLOSE_S)
        self.dropped += self._queue.qsize()

    def _send_all(self) -> None:
        with httpx.Client(timeout=TIMEOUT_S) as client:
            while (item := self._queue.get()) is not None:
                body, headers = item
                try:
                    client.post(self.endpoint, content=body, headers=headers).raise_for_status()
                    self.sent += 1
                except httpx.HTTPError:
                    self.dropped += 1
