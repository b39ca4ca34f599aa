"""Aggregates of a run (docs/report.md): per metric, per corpus, per tag, latency, costs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from rag_ci.core.questionset.shards import Shard, select_shard
from rag_ci.core.results import Aggregates, GroupAggregate, MetricAggregate, QuestionResult, RunResult


def percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else None


def _count(group: GroupAggregate, record: QuestionResult) -> None:
    group.n += 1
    if record.verdict == "pass":
        group.passed += 1
    elif record.verdict == "fail":
        group.failed += 1
    elif record.verdict == "routing_error":
        group.routing_errors += 1
    else:
        group.errors += 1


def aggregate(records: Iterable[QuestionResult]) -> Aggregates:
    records = list(records)
    result = Aggregates()
    scores: dict[str, list[float]] = {}
    for record in records:
        _count(result.overall, record)
        for corpus in record.corpora:
            _count(result.per_corpus.setdefault(corpus, GroupAggregate()), record)
        for tag in record.tags:
            _count(result.per_tag.setdefault(tag, GroupAggregate()), record)
        for name, metric in record.metrics.items():
            agg = result.per_metric.setdefault(name, MetricAggregate())
            agg.n += 1
            if metric.error:
                agg.errors += 1
            elif metric.passed is True:
                agg.passed += 1
            elif metric.passed is False:
                agg.failed += 1
            if metric.score is not None:
                scores.setdefault(name, []).append(metric.score)
        result.generator_cost_usd += record.cost_usd
        result.judge_cost_usd += record.judge_cost_usd
    for name, values in scores.items():
        result.per_metric[name].mean = round(float(np.mean(values)), 6)
    latencies = [r.latency_s for r in records if r.latency_s is not None and r.verdict != "error"]
    result.latency_p50_s = percentile(latencies, 50)
    result.latency_p95_s = percentile(latencies, 95)
    result.generator_cost_usd = round(result.generator_cost_usd, 8)
    result.judge_cost_usd = round(result.judge_cost_usd, 8)
    result.per_corpus = dict(sorted(result.per_corpus.items()))
    result.per_tag = dict(sorted(result.per_tag.items()))
    result.per_metric = dict(sorted(result.per_metric.items()))
    return result


def restrict_to_shard(result: RunResult, shard: Shard) -> RunResult:
    """The part of a whole run (a baseline) that one shard covers.

    Compared with the whole baseline, a shard would report every other shard's
    questions as removed.
    """
    kept = select_shard(result.questions, shard)
    return result.model_copy(update={"questions": kept, "aggregates": aggregate(kept)})
