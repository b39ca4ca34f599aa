"""Text helpers of the core: what keyword matching compares, and whether an answer declines."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    """Casefolded, accent-free, single-spaced: what keyword matching compares."""
    if text.isascii():  # same result, without decomposing every character (most answers)
        return _SPACES.sub(" ", text.lower()).strip()
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", stripped.casefold()).strip()


_REFUSAL_PATTERNS = [
    r"\b(not|isn't|is not|wasn't) (in|covered (in|by)|mentioned in|found in|part of) (the|these|my|our|provided) (documents?|documentation|context|sources?|manuals?)",
    r"\b(could not|couldn't|cannot|can't|can not|unable to|did not|didn't) (find|locate|answer|determine|see)\b",
    r"\bno (relevant )?(information|mention|answer|documentation)\b",
    r"\b(i|we) (do not|don't) (know|have (that|this|enough) information)\b",
    r"\bout of (the )?scope\b",
    r"\b(the )?(documents?|context|sources?) (do|does) not (say|mention|contain|cover|specify)\b",
]
_REFUSAL_RE = re.compile("|".join(_REFUSAL_PATTERNS), re.IGNORECASE)


def is_refusal(answer: str) -> bool:
    """Heuristic: does the answer decline ("not in the documents") rather than answer?"""
    return bool(_REFUSAL_RE.search(normalise_text(answer)))
