"""Routing (docs/questions.md, docs/targets.md): which corpora a question goes to, and leaks out of them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from rag_ci.core.questionset.questions import Question


class _FromCorpus(Protocol):
    doc_id: str | None  # a retrieved context's corpus (rag_ci.core.results.Context)


def route(question: Question, corpora: Mapping[str, object]) -> list[str]:
    """The corpora a question is sent to.

    A question names its corpora with `doc_id` (a list for cross-corpus questions).
    An out-of-scope question without `doc_id` goes to every corpus: the RAG must
    refuse with all of its knowledge available.
    """
    if question.doc_id:
        return list(question.doc_id)
    return sorted(corpora)


def routing_leaks(contexts: Iterable[_FromCorpus], routed: Iterable[str]) -> list[str]:
    """Corpora that contexts came from although the question was not routed there.

    A context without a `doc_id` cannot be proven to be in bounds, so it counts as a
    leak too ("<missing doc_id>"): the contract requires it.
    """
    allowed = set(routed)
    leaks: list[str] = []
    for context in contexts:
        corpus = context.doc_id if context.doc_id else "<missing doc_id>"
        if corpus not in allowed and corpus not in leaks:
            leaks.append(corpus)
    return leaks
