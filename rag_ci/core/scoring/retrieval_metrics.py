"""Judge-free metrics: retrieval by `sources`, keyword coverage, refusal detection.

Each function is pure and cheap; `score_retrieval` applies the configured ones to
one answer and returns MetricResults with pass/fail against the thresholds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from rag_ci.core.base.text import is_refusal, normalise_text
from rag_ci.core.config import MetricConfig
from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context, MetricResult

_SOURCE_SEPARATORS = ("#", ":", "/")
# A file extension at the end of a source's last path part (`.txt`, `.md`, `.html`).
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def _matches_exactly(context_source: str, expected: str) -> bool:
    if context_source == expected:
        return True
    return context_source.startswith(expected) and context_source[len(expected)] in _SOURCE_SEPARATORS


def _document_of(source: str) -> str:
    """The document a source names, without its chunk locator (`#3`, `:3`)."""
    return re.split(r"[#:]", source, maxsplit=1)[0]


def _extension_dropped(with_extension: str, without: str) -> bool:
    """`without` names the document `with_extension` names, its file extension left out."""
    document, bare = _document_of(with_extension), _document_of(without)
    extension = _EXTENSION.search(document.rsplit("/", 1)[-1])
    return (
        extension is not None
        and _EXTENSION.search(bare.rsplit("/", 1)[-1]) is None
        and document[: -len(extension.group())] == bare
    )


def source_matches(context_source: str | None, expected: str) -> bool:
    """A context matches an expected source id exactly or as one of its chunks.

    `mss60/evt.md` matches `mss60/evt.md`, `mss60/evt.md#3` and `mss60/evt.md:3`. A RAG
    that names documents without their file extension matches too: `news/q0.txt` matches
    `news/q0` and `news/q0#3`, and `news/q0` matches `news/q0.txt#3`; `evt.md` never
    matches `evt.mdx` (both have an extension, and they differ).
    """
    if not context_source:
        return False
    if _matches_exactly(context_source, expected):
        return True
    return _extension_dropped(expected, context_source) or _extension_dropped(context_source, expected)


def relevance(contexts: Sequence[Context], sources: Sequence[str]) -> np.ndarray:
    """Binary relevance per rank; a source counts once, at its first (best) rank.

    Counting every chunk of a relevant document would let DCG exceed the ideal.
    """
    seen: set[str] = set()
    rel = np.zeros(len(contexts), dtype=float)
    for rank, context in enumerate(contexts):
        for expected in sources:
            if expected not in seen and source_matches(context.source, expected):
                seen.add(expected)
                rel[rank] = 1.0
                break
    return rel


def hit_at_k(rel: np.ndarray, k: int) -> float:
    return float(rel[:k].any())


def reciprocal_rank(rel: np.ndarray) -> float:
    hits = np.flatnonzero(rel)
    return 1.0 / (hits[0] + 1) if hits.size else 0.0


def ndcg_at_k(rel: np.ndarray, k: int, n_relevant: int) -> float:
    if n_relevant == 0:
        return 0.0
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float((rel[:k] * discounts[: len(rel[:k])]).sum())
    idcg = float(discounts[: min(k, n_relevant)].sum())
    return dcg / idcg


def source_recall_at_k(rel: np.ndarray, k: int, n_relevant: int) -> float:
    return float(rel[:k].sum()) / n_relevant if n_relevant else 0.0


def source_precision_at_k(rel: np.ndarray, k: int) -> float:
    top = rel[:k]
    return float(top.sum()) / len(top) if len(top) else 0.0


def keyword_coverage(answer: str, keywords: Sequence[str]) -> float:
    if not keywords:
        return 0.0
    text = normalise_text(answer)
    found = sum(1 for keyword in keywords if normalise_text(keyword) in text)
    return found / len(keywords)


def _result(
    name: str,
    score: float,
    cfg: MetricConfig,
    reason: str,
    kind: Literal["retrieval", "answer", "judge"] = "retrieval",
) -> MetricResult:
    passed = None if cfg.threshold is None else score >= cfg.threshold
    return MetricResult(
        name=name, kind=kind, score=round(score, 6), threshold=cfg.threshold, passed=passed, reason=reason
    )


def score_retrieval(
    question: Question,
    answer: str,
    contexts: Sequence[Context],
    configs: Mapping[str, MetricConfig],
) -> dict[str, MetricResult]:
    """The judge-free metrics that apply to this question.

    Retrieval metrics need `sources` and do not apply to refusal questions;
    keyword coverage needs `keywords`; refusal applies to every question: an
    in-scope question must be answered, an out-of-scope one refused.
    """
    results: dict[str, MetricResult] = {}
    sources = list(question.sources)
    if sources and not question.is_refusal:
        rel = relevance(contexts, sources)
        found = int(rel.sum())
        for name, cfg in configs.items():
            k = cfg.k or 5
            if name == "hit_at_k":
                results[name] = _result(name, hit_at_k(rel, k), cfg, _hit_reason(rel, found, len(sources), k))
            elif name == "mrr":
                results[name] = _result(
                    name,
                    reciprocal_rank(rel),
                    cfg,
                    f"first expected source at rank {_first_rank(rel)}"
                    if rel.any()
                    else "no expected source retrieved",
                )
            elif name == "ndcg":
                results[name] = _result(
                    name,
                    ndcg_at_k(rel, k, len(sources)),
                    cfg,
                    f"nDCG@{k} over {len(sources)} expected sources",
                )
            elif name == "source_recall":
                results[name] = _result(
                    name,
                    source_recall_at_k(rel, k, len(sources)),
                    cfg,
                    f"{int(rel[:k].sum())}/{len(sources)} expected sources in the top {k}",
                )
            elif name == "source_precision":
                results[name] = _result(
                    name,
                    source_precision_at_k(rel, k),
                    cfg,
                    f"{int(rel[:k].sum())} of the top {min(k, len(contexts))} contexts are expected sources",
                )
    if "keyword_coverage" in configs and question.keywords:
        cfg = configs["keyword_coverage"]
        missing = [kw for kw in question.keywords if normalise_text(kw) not in normalise_text(answer)]
        reason = "all keywords present" if not missing else "missing: " + ", ".join(missing)
        results["keyword_coverage"] = _result(
            "keyword_coverage", keyword_coverage(answer, question.keywords), cfg, reason, kind="answer"
        )
    if "refusal" in configs:
        refused = is_refusal(answer)
        if question.is_refusal:
            score, reason = (
                (1.0, "refused as expected") if refused else (0.0, "answered an out-of-scope question")
            )
        else:
            score, reason = (0.0, "refused an in-scope question") if refused else (1.0, "answered")
        results["refusal"] = _result("refusal", score, configs["refusal"], reason, kind="answer")
    return results


def _hit_reason(rel: np.ndarray, found: int, expected: int, k: int) -> str:
    in_top = int(rel[:k].sum())
    if not found:
        return f"none of the {expected} expected sources retrieved (top {k} checked)"
    return f"{in_top}/{expected} expected sources in the top {k}; first at rank {_first_rank(rel)}"


def _first_rank(rel: np.ndarray) -> str:
    hits = np.flatnonzero(rel)
    return str(hits[0] + 1) if hits.size else "none"
