"""The latency of each stage of the RAG (retrieval, generation), from its own spans
(`target.traces: otlp`, docs/traces.md), beside the run's latency in the reports."""

from __future__ import annotations

from rag_ci.core.reporting.number_formats import fmt_ms
from rag_ci.core.reporting.template_functions import template_global
from rag_ci.core.results import RunResult
from rag_ci.core.scoring.aggregate import percentile

STAGES = ("retrieval", "generation")


@template_global
def stage_latency_words(run: RunResult) -> str:
    """'retrieval p50 12 ms, p95 30 ms · generation p50 410 ms, p95 900 ms', or '' when the run
    has no stage times (no traces)."""
    parts = []
    for stage in STAGES:
        times = [q.stage_latency_s[stage] for q in run.questions if stage in q.stage_latency_s]
        if times:
            parts.append(f"{stage} p50 {fmt_ms(percentile(times, 50))}, p95 {fmt_ms(percentile(times, 95))}")
    return " · ".join(parts)
