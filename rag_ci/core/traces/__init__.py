"""What a RAG's own OpenTelemetry spans say it did for one question (docs/traces.md)."""
