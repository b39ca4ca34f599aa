"""`target.traces: otlp`: rag-ci receives the RAG's own OpenTelemetry spans (docs/traces.md)."""
