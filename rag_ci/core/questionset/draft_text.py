"""The words of a draft: its keywords, its misspelt variant, its likeness to other questions.

- `pick_keywords`: 2-5 salient terms of the reference that occur verbatim in the passage
  (numbers with their units, codes, names, then rare words), what `keyword_coverage`
  then expects in a good answer;
- `misspell`: a question as a hurried user types it, seeded (the misspelt adversarial
  drafts; numbers, codes and names are left alone, as people get those from the screen);
- `normalise`: what duplicate detection compares (scored by rag_ci.core.questionset.similarity).

Pure: strings in, strings out.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping, Sequence

from rag_ci.core.questionset.distinctive import distinctive_words

MAX_KEYWORDS = 5
MIN_KEYWORDS = 2

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "up",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "within",
        "without",
        "you",
        "your",
        "also",
        "only",
        "each",
        "every",
        "any",
        "all",
        "more",
        "most",
        "much",
        "many",
        "very",
        "over",
        "under",
        "about",
        "after",
        "before",
        "between",
        "both",
        "either",
    ]
)
# A number with its unit: "6.5 hours", "2 A", "500 kbit/s", "80 °C", "120 Ω", "10,000 km", "2.2-inch".
_NUMBER_UNIT = re.compile(
    r"(?<![\w.-])\d+(?:[.,]\d+)*(?:-[A-Za-z]{1,12}|\s?(?:%|°\s?[CF]|[A-Za-zΩµ]{1,12}(?:/[A-Za-z]{1,6})?))?(?![\w])"
)
# Codes: "E-07", "M8", "DU-3", "0x1A0", "IP54", "CAN-H"; all-capital words: "MODE", "USB"; a
# numbered standard: "PEP 681", "RFC 7231".
_CODE = re.compile(
    r"(?<![\w-])(?:0x[0-9A-Fa-f]+|[A-Z]{1,5}-?\d{1,5}[A-Za-z]?|(?:PEP|RFC|ISO|IEC|IEEE)\s\d{1,5}|"
    r"[A-Z]{2,}(?:-[A-Z0-9]+)?)(?![\w-])"
)
# Names: two or more capitalised words in a row, the last may be a number ("Lumen Service Tool",
# "PowerPack 400", "Zero-Load Calibration").
_NAME = re.compile(r"(?<![\w-])[A-Z][a-z][\w-]*(?:\s+(?:[A-Z][a-z][\w-]*|\d+))+(?![\w-])")
_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]")
_CODE_SPAN = re.compile(r"`([^`\n]{2,40})`")


_UNIT_WORDS = frozenset(["percent", "per", "cent", "degree", "degrees", "bar", "psi"])


def _units_ok(candidate: str) -> str:
    """A number's unit must be a unit, not the next word ("400 in", "625 communicate" -> the number):
    a symbol or short unit (V, Wh, km, rpm, kbit/s, °C), a counted plural (hours, revolutions), or a
    measure word (percent)."""
    match = re.match(r"^([\d.,]+)\s?(.*)$", candidate)
    if not match or not match.group(2) or match.group(2).startswith(("-", "°", "%")):
        return candidate
    unit = match.group(2)
    if unit in STOP_WORDS:
        return match.group(1)
    if len(unit.split("/")[0]) <= 4 or unit.lower() in _UNIT_WORDS or (unit.endswith("s") and unit.islower()):
        return candidate
    return match.group(1)


def keyword_candidates(reference: str) -> tuple[list[str], list[str]]:
    """(salient terms, long words as a fallback), each most telling first, without repeats.

    Salient, in this order: numbers with their units, codes, names, then bare numbers (a
    "30" says less than "60 percent" or "PowerPack 400")."""
    tiers: list[list[str]] = [[], [], [], []]
    # Identifiers in code spans (`retention_hours`, `relay.yaml`, `gpt-4.1-mini`): what an answer must name.
    # A span of punctuation alone (MDX's `{/*` and `*/}`) names nothing.
    tiers[1] += [
        m.group(1).strip()
        for m in _CODE_SPAN.finditer(reference)
        if len(m.group(1).split()) <= 2 and re.search(r"[^\W_]", m.group(1))
    ]
    for pattern in (_NUMBER_UNIT, _CODE, _NAME):
        for match in pattern.finditer(reference):
            term = _units_ok(match.group().strip())
            words = term.split()
            # "The PowerPack 625" is "PowerPack 625", "The Lumen" no name at all; "CAN" (a code) is no stop word.
            while len(words) > 1 and words[0].lower() in STOP_WORDS:
                words = words[1:]
            if pattern is _NAME:
                if len(words) < 2:
                    continue
                term = " ".join(words)
            if not term:
                continue
            tier = (
                3
                if pattern is _NUMBER_UNIT and re.fullmatch(r"[\d.,]+", term)
                else (_NUMBER_UNIT, _CODE, _NAME).index(pattern)
            )
            tiers[tier].append(term)
    salient = list(dict.fromkeys(t for tier in tiers for t in tier))
    # Linear in the reference's length (a one-paragraph document may be megabytes long): a set
    # for membership, and each word's first place from one pass, not `list` and `str.index`.
    taken = set(salient)
    first: dict[str, int] = {}
    for match in _WORD.finditer(reference):
        w = match.group()
        if len(w) >= 4 and w not in taken and w not in first and w.lower() not in STOP_WORDS:
            first[w] = match.start()
    fallback = sorted(first, key=lambda w: (-len(w), first[w]))
    return salient, fallback


def _choose(per_passage: list[list[str]], chosen: list[str], limit: int) -> list[str]:
    """Terms taken from each passage in turn; a term inside a chosen one adds nothing
    ("400" beside "PowerPack 400"), a chosen term inside a new one gives way to it."""
    while any(per_passage) and len(chosen) < limit:
        for terms in per_passage:
            while terms:
                term = terms.pop(0)
                if not any(term in other for other in chosen):
                    chosen = [c for c in chosen if c not in term] + [term]
                    break
            if len(chosen) >= limit:
                break
    return chosen


def pick_keywords(
    reference: str,
    passages: Sequence[str],
    limit: int = MAX_KEYWORDS,
    shares: Mapping[str, float] | None = None,
) -> tuple[str, ...]:
    """2 to `limit` keywords of the reference, each found verbatim in one of the passages; with
    several passages (a cross-corpus draft) each passage gives one in turn, so the set covers
    both. Words stand in only when the reference has fewer than two salient terms, and only
    distinctive ones (rag_ci.core.questionset.distinctive; `shares`: each term's share of the
    corpus's documents), so a draft may have a single keyword rather than a generic one."""
    salient, fallback = keyword_candidates(reference)
    fallback = distinctive_words(fallback, shares or {})

    def located(terms: list[str]) -> list[list[str]]:
        per_passage: list[list[str]] = [[] for _ in passages]
        for term in terms:
            for i, text in enumerate(passages):
                if term in text:
                    per_passage[i].append(term)
                    break
        return per_passage

    chosen = _choose(located(salient), [], limit)
    if len(chosen) < MIN_KEYWORDS:
        chosen = _choose(located(fallback), chosen, MIN_KEYWORDS)
    return tuple(chosen)


def keywords_from_each(keywords: Sequence[str], passages: Sequence[str]) -> bool:
    """Every passage holds at least one of the keywords (a cross-corpus reference uses both)."""
    return all(any(k in text for k in keywords) for text in passages)


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    kind = rng.randrange(3)
    if kind == 0:  # swap two neighbours
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:  # drop one
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]  # double one


def misspell(question: str, seed: str) -> str:
    """The question with 1-3 typos in its lower-case words of 5+ letters, lower-cased first
    letter and a doubled question mark; the same seed gives the same typos."""
    rng = random.Random(seed)
    tokens = re.split(r"(\s+)", question.strip())
    eligible = [i for i, t in enumerate(tokens) if re.fullmatch(r"[a-z]{5,}[?.,!]?", t)]
    if eligible:
        count = min(len(eligible), max(1, min(3, len(eligible) // 3 + 1)))
        for i in sorted(rng.sample(eligible, count)):
            word = re.match(r"[a-z]+", tokens[i]).group()  # type: ignore[union-attr]
            tokens[i] = _typo(word, rng) + tokens[i][len(word) :]
    text = "".join(tokens)
    if text[:1].isupper() and text[1:2].islower():
        text = text[0].lower() + text[1:]
    return text.rstrip("?.! ") + " ??" if text.endswith("?") else text


def normalise(text: str) -> str:
    """Accent-free, case-folded words separated by single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(re.findall(r"\w+", plain))


def content_terms(text: str) -> set[str]:
    """The words that carry meaning (lower case, no stop words, 3+ letters) and every number."""
    return {w for w in normalise(text).split() if (len(w) >= 3 and w not in STOP_WORDS) or w.isdigit()}
