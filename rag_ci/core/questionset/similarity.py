"""How alike questions read, as a matrix: thousands of drafts against a set of thousands.

A pair's likeness is the higher of two scores, both computed by rapidfuzz's `process.cdist`
(C, every pair at once) on text normalised once per question:
- the Indel ratio of the normalised texts, 2·LCS/(|a|+|b|), which sees through case,
  punctuation and a few typos;
- the Jaccard overlap of the two sets of words, which sees through reordering. Each distinct
  word becomes one character and each question the sorted string of its words' characters:
  the LCS of two such strings is the size of the sets' intersection, so their Indel ratio
  is Dice's coefficient D, and Jaccard is D / (2 − D).

Pure: texts in, a numpy matrix out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process

from rag_ci.core.questionset.draft_text import normalise

# Word characters start above the surrogates' block, far from anything a word could be confused with.
_FIRST_CODE = 0xE000


@dataclass(frozen=True)
class Texts:
    """Questions normalised once: their text, and their set of words as a string (see above)."""

    normalised: list[str]
    words: list[str]

    @classmethod
    def of(cls, questions: Sequence[str], vocabulary: dict[str, str]) -> Texts:
        """`vocabulary` (word -> character, filled as words are met) must be the same dict for
        every Texts compared with each other."""
        normalised = [normalise(q) for q in questions]
        words = ["".join(sorted({_code(w, vocabulary) for w in text.split()})) for text in normalised]
        return cls(normalised, words)

    def rows(self, start: int, stop: int) -> Texts:
        return Texts(self.normalised[start:stop], self.words[start:stop])


def _code(word: str, vocabulary: dict[str, str]) -> str:
    if word not in vocabulary:
        vocabulary[word] = chr(_FIRST_CODE + len(vocabulary))
    return vocabulary[word]


def similarity_matrix(queries: Texts, choices: Texts) -> np.ndarray:
    """Likeness (0..1) of every query with every choice, shape (len(queries), len(choices));
    1.0 exactly when the normalised texts are the same."""
    if not queries.normalised or not choices.normalised:
        return np.zeros((len(queries.normalised), len(choices.normalised)), dtype=np.float32)
    text = process.cdist(
        queries.normalised, choices.normalised, scorer=fuzz.ratio, dtype=np.float32
    ) / np.float32(100)
    dice = process.cdist(queries.words, choices.words, scorer=fuzz.ratio, dtype=np.float32) / np.float32(100)
    jaccard = dice / (2.0 - dice)
    score = np.maximum(text, jaccard)
    same = (
        np.array(queries.normalised, dtype=object)[:, None]
        == np.array(choices.normalised, dtype=object)[None, :]
    )
    score[same] = 1.0
    # reordered: near, never "the same words"
    score[~same & (score >= 1.0)] = np.nextafter(np.float32(1.0), np.float32(0.0))
    return score
