"""The verdict cache: reuse the baseline's verdict when the judge would see exactly the same thing.

Key = (judge fingerprint, metric identity, question content hash, and the inputs
this metric reads: the exact answer and/or the contexts *in their order*).
DeepEval's own cache sorts the contexts, which is wrong for contextual precision
(a ranking metric), so it is off and this one is used. Entries live in
results.json (`MetricResult.cache_key` + the verdict), so the baseline artifact
carries them: an unchanged answer on a PR costs no judge call and adds no noise.
"""

from __future__ import annotations

from collections.abc import Iterable

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.results import Context, MetricResult, RunResult
from rag_ci.judges.metrics import JudgeMetricSpec

CACHE_KEY_VERSION = "v1"


def verdict_cache_key(
    judge_digest: str, spec: JudgeMetricSpec, question_hash: str, answer: str, contexts: Iterable[Context]
) -> str:
    payload: dict = {
        "judge": judge_digest,
        "metric": spec.name,
        "identity": spec.identity(),
        "question": question_hash,
    }
    if spec.uses_answer:
        payload["answer"] = answer
    if spec.uses_contexts:
        payload["contexts"] = [c.text for c in contexts]  # ordered: rank matters
    return f"{CACHE_KEY_VERSION}:{stable_hash(payload, 32)}"


class VerdictCache:
    def __init__(self, entries: dict[str, MetricResult] | None = None):
        self._entries = dict(entries or {})

    @classmethod
    def from_run(cls, run: RunResult | None) -> VerdictCache:
        """Every judged, error-free verdict of a previous run, by cache key."""
        entries: dict[str, MetricResult] = {}
        for question in run.questions if run else []:
            for metric in question.metrics.values():
                if metric.kind == "judge" and metric.cache_key and metric.error is None:
                    entries[metric.cache_key] = metric
        return cls(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def reuse(self, key: str) -> MetricResult | None:
        """The cached verdict as this run's result: no cost, no confirmation runs."""
        hit = self._entries.get(key)
        if hit is None:
            return None
        return hit.model_copy(
            update={"cached": True, "judge_cost_usd": 0.0, "confirm_runs": [], "unstable": False}
        )
