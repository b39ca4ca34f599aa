"""Where OpenTelemetry's own variables say traces go: the team's collector, named in rag-ci's
environment (the verdict spans, and the RAG's spans passed on under `target.traces: otlp`)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote


def traces_endpoint(environ: Mapping[str, str]) -> str | None:
    """`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`;
    None: no collector named."""
    if environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return f"{base.rstrip('/')}/v1/traces" if base else None


def traces_headers(environ: Mapping[str, str]) -> dict[str, str]:
    """`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`,
    values URL-encoded (a vendor's API key)."""
    text = environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or environ.get("OTEL_EXPORTER_OTLP_HEADERS", "")
    pairs = (part.split("=", 1) for part in text.split(",") if "=" in part)
    return {unquote(k.strip()): unquote(v.strip()) for k, v in pairs if k.strip()}
