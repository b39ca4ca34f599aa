"""`target.traces: otlp` wired around a target kind's runner: the receiver bound first, its address
in the target's environment, the runner wrapped (docs/traces.md)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from rag_ci.core.traces.otlp_env import traces_endpoint, traces_headers
from rag_ci.errors import RagCiError
from rag_ci.targets.base import Target


def otel_environment(endpoint: str) -> dict[str, str]:
    """What the RAG's OpenTelemetry SDK reads to export its spans to rag-ci: OTLP over HTTP with
    protobuf, to the receiver; batches sent within 100 ms, so a question's spans arrive soon
    after its answer; traces only (no metrics or logs exporter trying the same port)."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{endpoint}/v1/traces",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_TRACES_SAMPLER": "parentbased_always_on",
    }


def traced(config: Any, build: Callable[[Any], Target]) -> Target:
    """The runner `build(config)` makes, receiving its spans when `target.traces` says so."""
    if config.traces != "otlp":
        return build(config)
    if config.kind == "docker":
        raise RagCiError(
            "target.traces: otlp is not available for docker targets yet: the receiver listens on "
            "rag-ci's loopback, which a container does not reach. Use kind http with `start`, or unset it."
        )
    from rag_ci.targets.traces.forward import Forwarder
    from rag_ci.targets.traces.receiver import OtlpReceiver
    from rag_ci.targets.traces.traced import TracedTarget

    collector = traces_endpoint(os.environ)  # the team's own: the RAG's spans go there too
    receiver = OtlpReceiver(forward=Forwarder(collector, traces_headers(os.environ)) if collector else None)
    try:
        # rag-ci's receiver wins over the user's own exporter settings for the run
        inner = build(
            config.model_copy(update={"env": {**config.env, **otel_environment(receiver.endpoint)}})
        )
    except BaseException:
        receiver.close()
        raise
    return TracedTarget(inner, receiver, wait_s=config.traces_wait_s, corpus_key=config.traces_corpus_key)
