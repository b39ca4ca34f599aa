"""Extractive answers: quote the sentences of the best chunks that share most with the question.

No language model: the answer is always text that is in the documents, which
makes the example deterministic, free and fast, and still realistic enough for
retrieval, routing and keyword checks to matter.
"""

from __future__ import annotations

import re

from retrieval import SearchResult, tokenize

REFUSAL = "I could not find this in the documents."

# Below this BM25 score the best chunk shares only a common word or two with the
# question: the question is out of scope and we refuse rather than guess.
MIN_SCORE = 4.0
CHUNKS_PER_CORPUS = 3  # sentences are drawn from this many best chunks of each corpus
SECOND_SENTENCE = 0.6  # a runner-up sentence is added when it scores >= 60 % of the best

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Chunk text -> sentences; every line (paragraph or list item) ends one."""
    return [s.strip() for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]


def best_sentences(result: SearchResult, chunks: list[dict], corpus: str) -> list[str]:
    """The one or two sentences of `corpus`'s best chunks that cover the question best."""
    rows = [hit.chunk for hit in result.hits if chunks[hit.chunk]["corpus"] == corpus][:CHUNKS_PER_CORPUS]
    candidates = []  # (overlap, chunk rank, position, sentence): sorts best-first, deterministically
    for rank, row in enumerate(rows):
        for position, sentence in enumerate(sentences(chunks[row]["text"])):
            # Rare question words count more (IDF), each word once.
            overlap = sum(result.idf.get(term, 0.0) for term in set(tokenize(sentence)) if term in result.idf)
            if overlap > 0:
                candidates.append((-overlap, rank, position, sentence))
    candidates.sort()
    if not candidates:  # the chunk matched on its heading only: quote its opening sentence
        return sentences(chunks[rows[0]]["text"])[:1] if rows else []
    best = -candidates[0][0]
    chosen = [candidates[0][3]]
    if len(candidates) > 1 and -candidates[1][0] >= SECOND_SENTENCE * best:
        chosen.append(candidates[1][3])
    return chosen


def compose_answer(result: SearchResult, chunks: list[dict], corpora: list[str]) -> str:
    """One answer from the searched corpora; refuse when nothing relevant was found.

    With several corpora (a cross-corpus question such as "DU-2 vs DU-3") each
    corpus gets its own labelled sentences: a comparison needs both sides.
    """
    if not result.hits or result.hits[0].score < MIN_SCORE:
        return REFUSAL
    present = [c for c in corpora if any(chunks[h.chunk]["corpus"] == c and h.score >= MIN_SCORE for h in result.hits)]
    if len(present) == 1:
        return " ".join(best_sentences(result, chunks, present[0]))
    parts = [f"[{corpus}] " + " ".join(best_sentences(result, chunks, corpus)) for corpus in present]
    return " ".join(parts)
