"""The deltas of two runs as a whole (docs/report.md): metric means and how many questions each
scored, latency percentiles, costs, pass rates per corpus and per tag. Pure: the two runs'
aggregates in, `Comparison` fields out."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rag_ci.core.comparison.comparison import Delta
from rag_ci.core.results import GroupAggregate, RunResult


def run_deltas(base: RunResult, head: RunResult) -> dict[str, Any]:
    """The fields of `Comparison` that compare the runs as a whole."""
    ba, ha = base.aggregates, head.aggregates
    base_scored, head_scored = _scored(base), _scored(head)
    metrics = sorted(set(ba.per_metric) | set(ha.per_metric))
    return {
        "metric_means": {
            name: Delta(
                ba.per_metric[name].mean if name in ba.per_metric else None,
                ha.per_metric[name].mean if name in ha.per_metric else None,
            )
            for name in metrics
        },
        "latency_p50_s": Delta(ba.latency_p50_s, ha.latency_p50_s),
        "latency_p95_s": Delta(ba.latency_p95_s, ha.latency_p95_s),
        "generator_cost_usd": Delta(ba.generator_cost_usd, ha.generator_cost_usd),
        "judge_cost_usd": Delta(ba.judge_cost_usd, ha.judge_cost_usd),
        "per_corpus_pass_rate": _rate_deltas(ba.per_corpus, ha.per_corpus),
        "per_tag_pass_rate": _rate_deltas(ba.per_tag, ha.per_tag),
        "metric_scored": {
            name: (
                base_scored[name] if name in ba.per_metric else None,
                head_scored[name] if name in ha.per_metric else None,
            )
            for name in metrics
        },
        "questions_n": (ba.overall.n, ha.overall.n),
        "passed_n": (ba.overall.passed, ha.overall.passed),
    }


def _rates(groups: dict[str, GroupAggregate]) -> dict[str, float]:
    return {k: g.pass_rate for k, g in groups.items()}


def _rate_deltas(old: dict[str, GroupAggregate], new: dict[str, GroupAggregate]) -> dict[str, Delta]:
    o, n = _rates(old), _rates(new)
    return {k: Delta(o.get(k), n.get(k)) for k in sorted(set(o) | set(n))}


def _scored(result: RunResult) -> Counter[str]:
    """Per metric, how many questions it scored (one pass over the run)."""
    return Counter(
        name for q in result.questions for name, metric in q.metrics.items() if metric.score is not None
    )
