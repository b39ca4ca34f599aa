"""BM25 retrieval over the chunk index, restricted to the routed corpora.

Okapi BM25 (k1=1.5, b=0.75) on a dense chunk x term matrix: the example
corpus is a few hundred chunks, so numpy does every query in well under a
millisecond and the whole algorithm fits on one screen.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

K1 = 1.5
B = 0.75

# Words that carry no meaning for retrieval ("can" is missing on purpose: CAN bus). Dropping them keeps an off-topic
# question ("What is the capital of ...?") from scoring on "what", "is", "the".
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "between",
        "both",
        "but",
        "by",
        "could",
        "do",
        "does",
        "doing",
        "done",
        "during",
        "each",
        "else",
        "for",
        "from",
        "has",
        "have",
        "having",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "much",
        "must",
        "my",
        "no",
        "not",
        "of",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "over",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)

# Inside a word, hyphens, apostrophes and digit separators are dropped instead of
# splitting: "DU-3", "du3" and "DU3" all become "du3"; "E-07" becomes "e07";
# "10,000 km" becomes "10000". Product names and error codes then stay one token.
_JOINERS = re.compile(r"(?<=[a-z0-9])[-'](?=[a-z0-9])|(?<=[0-9])[,.](?=[0-9])")
_WORD = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    """Lower-case and strip accents ("Röhre" -> "rohre"), so spelling variants meet."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def stem(word: str) -> str:
    """A deliberately tiny stemmer: charge/charged/charging/charges -> "charg".

    Enough to match the inflections people actually type in questions, and
    simple enough to predict by hand (a full Porter stemmer would be neither).
    """
    if word.isdigit():
        return word
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Text -> normalised content words, not yet stemmed."""
    joined = _JOINERS.sub("", normalise(text))
    return [w for w in _WORD.findall(joined) if w not in STOPWORDS]


def tokenize(text: str) -> list[str]:
    """Text -> stemmed content words: the BM25 terms, for chunks and questions alike."""
    return [stem(w) for w in words(text)]


@dataclass(frozen=True)
class Hit:
    chunk: int  # row in the index
    score: float
    matched: tuple[str, ...]  # the query terms that occur in this chunk


@dataclass(frozen=True)
class SearchResult:
    terms: tuple[str, ...]  # the query terms after typo correction
    idf: dict[str, float]  # their IDF within the searched corpora (answer.py reuses it)
    hits: tuple[Hit, ...]  # best first, only chunks with a positive score


class Bm25Index:
    """Built at start-up from the chunk texts: a few milliseconds for the example corpus."""

    def __init__(self, chunk_texts: list[str], chunk_corpora: list[str]):
        chunk_words = [words(text) for text in chunk_texts]
        self.spellings = sorted({w for ws in chunk_words for w in ws})  # for typo correction
        chunk_tokens = [[stem(w) for w in ws] for ws in chunk_words]
        self.vocabulary = sorted({t for tokens in chunk_tokens for t in tokens})
        self.column = {term: i for i, term in enumerate(self.vocabulary)}
        self.corpora = np.array(chunk_corpora)
        self.tf = np.zeros((len(chunk_tokens), len(self.vocabulary)))
        for row, tokens in enumerate(chunk_tokens):
            for term in tokens:
                self.tf[row, self.column[term]] += 1
        self.length = self.tf.sum(axis=1)

    def correct(self, word: str) -> str:
        """Map a misspelt question word to the closest word in the documents ("torqe" -> "torque").

        Why this and not character n-grams: a corrected word is still one BM25
        term, so scores keep their meaning and the out-of-scope threshold in
        answer.py stays reliable; n-grams would give every question a partial
        match with everything. To avoid "correcting" real words into others
        ("cost" -> "coast", "brake" -> "bracket"), short words, words with digits
        ("E-07" must not become "E-03") are left alone, and a correction keeps the
        first letter and the length give or take one: that is what typos look like.
        """
        if word in self.spellings or len(word) < 5 or any(ch.isdigit() for ch in word):
            return word
        candidates = [w for w in self.spellings if w[0] == word[0] and abs(len(w) - len(word)) <= 1]
        close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.8)
        return close[0] if close else word

    def query_terms(self, question: str) -> tuple[str, ...]:
        """The question's BM25 terms after typo correction, each once, in question order."""
        return tuple(dict.fromkeys(stem(self.correct(w)) for w in words(question)))

    def search(self, question: str, corpora: list[str]) -> SearchResult:
        """Rank the chunks of `corpora` only, as if they were the whole collection.

        Document frequencies and the average chunk length are computed over the
        routed corpora: statistics from another product line must not change
        how this one is ranked.
        """
        terms = self.query_terms(question)
        rows = np.flatnonzero(np.isin(self.corpora, corpora))
        known = [t for t in terms if t in self.column]
        if rows.size == 0 or not known:
            return SearchResult(terms, {}, ())

        tf = self.tf[np.ix_(rows, [self.column[t] for t in known])]
        n_chunks = rows.size
        df = (tf > 0).sum(axis=0)
        idf = np.log(1.0 + (n_chunks - df + 0.5) / (df + 0.5))
        length = self.length[rows]
        norm = K1 * (1.0 - B + B * length / length.mean())
        scores = (idf * tf * (K1 + 1.0) / (tf + norm[:, None])).sum(axis=1)

        # Stable order: best score first, index order (corpus/file/chunk) on ties.
        order = sorted(range(n_chunks), key=lambda i: (-scores[i], rows[i]))
        hits = tuple(
            Hit(int(rows[i]), float(scores[i]), tuple(t for t, n in zip(known, tf[i]) if n > 0))
            for i in order
            if scores[i] > 0
        )
        return SearchResult(terms, {t: float(v) for t, v in zip(known, idf)}, hits)
