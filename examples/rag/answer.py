"""Extractive answers: quote the sentences of the best chunks that share most with the question.

No language model: the answer is always text that is in the documents, which
makes the example deterministic, free and fast, and still realistic enough for
retrieval, routing and keyword checks to matter.
"""

from __future__ import annotations

import re

from retrieval import Hit, SearchResult, tokenize

REFUSAL = "I could not find this in the documents."

# Out-of-scope detection. The best chunk must score at least MIN_SCORE and
# contain at least two *informative* question words (IDF >= 1, i.e. words that
# are not in a third or more of the chunks). One shared word is a coincidence
# ("What does a NEW DU-3 cost in Japan?" meets "stores the NEW offset"); two are
# a topic. A one-word question ("E-07?") needs its one word.
MIN_SCORE = 2.5
MIN_INFORMATIVE_IDF = 1.0
CHUNKS_PER_CORPUS = 3  # sentences are drawn from this many best chunks of each corpus
SECOND_SENTENCE = 0.6  # a runner-up sentence is added when it scores >= 60 % of the best

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Chunk text -> answer units: the sentences of each paragraph, and whole list items.

    A list item ("- E-07: battery voltage below 30 V. Charge the battery.") is one
    unit: the code, its meaning and its remedy belong together.
    """
    units = []
    for line in text.splitlines():
        if line.startswith("- "):
            units.append(line[2:].strip())
        else:
            units.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return units


def best_sentences(result: SearchResult, chunks: list[dict], corpus: str) -> list[str]:
    """The one or two sentences of `corpus`'s best chunks that cover the question best."""
    rows = [hit.chunk for hit in result.hits if chunks[hit.chunk]["corpus"] == corpus][:CHUNKS_PER_CORPUS]
    candidates = []  # (overlap, chunk rank, position, sentence): sorts best-first, deterministically
    for rank, row in enumerate(rows):
        # A sentence inherits the topic of its section: under "Pairing procedure",
        # "Hold LIGHT and PLUS for 3 seconds" answers "How do I pair?".
        heading_terms = set(tokenize(chunks[row]["heading"]))
        for position, sentence in enumerate(sentences(chunks[row]["text"])):
            # Rare question words count more (IDF), each word once. Summed in sorted
            # order and rounded: a set's order varies per process (hash seed), and
            # float sums in a different order would break ties differently.
            terms = sorted(heading_terms | set(tokenize(sentence)))
            overlap = round(sum(result.idf.get(term, 0.0) for term in terms), 9)
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


def in_scope(result: SearchResult, hit: Hit) -> bool:
    """Does this hit answer the question, or merely share a word with it? (see MIN_SCORE)"""
    # A question word the documents never use counts as informative: it is
    # exactly what makes "sourdough bread" off-topic.
    informative = [t for t in result.terms if result.idf.get(t, MIN_INFORMATIVE_IDF) >= MIN_INFORMATIVE_IDF]
    found = [t for t in hit.matched if result.idf[t] >= MIN_INFORMATIVE_IDF]
    return hit.score >= MIN_SCORE and len(found) >= min(2, len(informative))


def compose_answer(result: SearchResult, chunks: list[dict], corpora: list[str]) -> str:
    """One answer from the searched corpora; refuse when nothing relevant was found.

    With several corpora (a cross-corpus question such as "DU-2 vs DU-3") each
    corpus gets its own labelled sentences: a comparison needs both sides.
    """
    if not result.hits or not in_scope(result, result.hits[0]):
        return REFUSAL
    present = [
        c for c in corpora if any(chunks[h.chunk]["corpus"] == c and in_scope(result, h) for h in result.hits)
    ]
    if len(present) == 1:
        return " ".join(best_sentences(result, chunks, present[0]))
    parts = [f"[{corpus}] " + " ".join(best_sentences(result, chunks, corpus)) for corpus in present]
    return " ".join(parts)
