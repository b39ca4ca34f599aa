"""BM25 retrieval over the chunk index, restricted to the routed corpora.

Okapi BM25 (k1=1.5, b=0.75) on a dense chunk x term matrix: the example
corpus is a few hundred chunks, so numpy does every query in well under a
millisecond and the whole algorithm fits on one screen.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

K1 = 1.5
B = 0.75

# Words that carry no meaning for retrieval. Dropping them keeps an off-topic
# question ("What is the capital of ...?") from scoring on "what", "is", "the".
STOPWORDS = frozenset(
    """a about after all also an and any are as at be been before being between both but by can
    could do does doing done during each else for from has have having how i if in into is it its
    me much must my no not of on once only or other our over should so some such than that the
    their them then there these they this those to too under until up very was we were what when
    where which while who whom why will with would you your""".split()
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


def tokenize(text: str) -> list[str]:
    """Text -> stemmed content words. The same function runs on chunks and questions."""
    joined = _JOINERS.sub("", normalise(text))
    return [stem(w) for w in _WORD.findall(joined) if w not in STOPWORDS]


@dataclass(frozen=True)
class Hit:
    chunk: int  # row in the index
    score: float


@dataclass(frozen=True)
class SearchResult:
    terms: tuple[str, ...]  # the query terms after typo correction
    idf: dict[str, float]  # their IDF within the searched corpora (answer.py reuses it)
    hits: tuple[Hit, ...]  # best first, only chunks with a positive score


class Bm25Index:
    def __init__(self, chunk_tokens: list[list[str]], chunk_corpora: list[str]):
        self.vocabulary = sorted({t for tokens in chunk_tokens for t in tokens})
        self.column = {term: i for i, term in enumerate(self.vocabulary)}
        self.corpora = np.array(chunk_corpora)
        self.tf = np.zeros((len(chunk_tokens), len(self.vocabulary)))
        for row, tokens in enumerate(chunk_tokens):
            for term in tokens:
                self.tf[row, self.column[term]] += 1
        self.length = self.tf.sum(axis=1)

    def correct(self, term: str) -> str:
        """Map a misspelt query word to the closest indexed word ("torqe" -> "torqu").

        Why this and not character n-grams: a corrected word is still one BM25
        term, so scores keep their meaning and the out-of-scope threshold in
        answer.py stays reliable; n-grams would give every question a partial
        match with everything. Short words and numbers are never "corrected":
        "E-07" must not turn into "E-03".
        """
        if term in self.column or len(term) < 4 or any(ch.isdigit() for ch in term):
            return term
        close = difflib.get_close_matches(term, self.vocabulary, n=1, cutoff=0.8)
        return close[0] if close else term

    def search(self, question: str, corpora: list[str]) -> SearchResult:
        """Rank the chunks of `corpora` only, as if they were the whole collection.

        Document frequencies and the average chunk length are computed over the
        routed corpora: statistics from another product line must not change
        how this one is ranked.
        """
        terms = tuple(dict.fromkeys(self.correct(t) for t in tokenize(question)))
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
        hits = tuple(Hit(int(rows[i]), float(scores[i])) for i in order if scores[i] > 0)
        return SearchResult(terms, {t: float(v) for t, v in zip(known, idf) if math.isfinite(v)}, hits)
