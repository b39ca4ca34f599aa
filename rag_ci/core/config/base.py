"""The ground of rag-ci.yml's models: the strict base model and the metric names and defaults."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RETRIEVAL_METRICS = (
    "hit_at_k",
    "mrr",
    "ndcg",
    "source_precision",
    "source_recall",
    "keyword_coverage",
    "refusal",
)
JUDGE_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "contextual_precision",
    "contextual_recall",
    "correctness",
    "completeness",
    # Conversation-level, opt-in (never a default): judged on a conversation's last turn (docs/conversations.md).
    "knowledge_retention",
    "conversation_completeness",
)

# Defaults when `metrics:` is absent. threshold None = reported, not gating.
DEFAULT_RETRIEVAL_METRICS: dict[str, dict[str, Any]] = {
    "hit_at_k": {"k": 5, "threshold": 1.0},
    "mrr": {"threshold": None},
    "ndcg": {"k": 5, "threshold": None},
    "source_recall": {"k": 5, "threshold": None},
    "keyword_coverage": {"threshold": 0.6},
    "refusal": {"threshold": 1.0},
}
DEFAULT_JUDGE_METRICS: dict[str, dict[str, Any]] = {
    "faithfulness": {"threshold": 0.7},
    "answer_relevancy": {"threshold": 0.7},
    "contextual_precision": {"threshold": 0.5},
    "contextual_recall": {"threshold": 0.7},
    "correctness": {"threshold": 1.0},
    "completeness": {"threshold": 1.0},
}


class StrictModel(BaseModel):
    # NaN and infinity are never meaningful settings: a NaN threshold fails every
    # question and, as NaN != NaN, makes every later baseline incompatible.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MetricConfig(StrictModel):
    threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Score in [0, 1] a question needs to pass this metric; unset: reported, not gating.",
    )
    k: int | None = Field(
        None, ge=1, description="How many retrieved contexts are read (hit_at_k, ndcg, source_recall...)."
    )
    criteria: str | None = Field(
        None, description="GEval criteria replacing rag-ci's own (correctness, completeness)."
    )
