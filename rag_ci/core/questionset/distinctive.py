"""Which words of a reference are worth a keyword: the terms a person would choose, because an
answer without them is wrong, not merely worded otherwise (issue 55: with `--writer fake`, 29 of
37 kept drafts had generic keywords such as "accordance", "Occasionally", "actually",
"chapter", and `keyword_coverage` gating on them gates on noise).

Numbers, codes, names and identifiers come first (rag_ci.core.questionset.draft_text); a plain
word stands in only when it is distinctive: no stop word, no adverb, none of the words any
documentation uses, and, scored against the corpus, not in most of its documents.

Pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

# Words any page of documentation uses, whatever its subject: never a keyword on their own.
GENERIC_WORDS = frozenset(
    re.findall(
        r"\w+",
        """
    able above according accordance account actual actually add added adding additional additionally
    alongside application applications file files folder folders function functions mind project projects
    statement statements question questions answer answers throughout say says said
    again against allow allowed allows already although always another anything anyway appear apply
    approach around available based basic basically become becomes being below better body call called
    calling calls case cases cause certain change changed changes chapter check choose chosen clear
    come comes common consider contain contains content context could currently default defaults
    define defined describe described description detail details different directly document documents
    documentation done during easily easy either else enable enabled enables end ensure entire
    especially even example examples except exist existing expected explain explained fact feature
    features first follow followed following follows form found further general generally get gets
    getting give given gives going good great guide handle happen have having help here however idea
    important include included includes including indeed information instance instead keep kind know
    later least less like likely line lines list look made main make makes making manner many mean
    means might mode more moreover most mostly much must name named need needed needs never new next
    note noted notes nothing number often once one ones order other others otherwise out over overview
    page part particular particularly people perhaps place please point possible practice prefer
    present pretty previous previously probably proper properly provide provided provides quite rather
    read reading really reason recommend recommended refer regarding related relevant require required
    requires result results return right same second section see seen set sets setting several should
    show shown side similar simple simply since single situation some something sometimes specific
    specified still such support supported supports sure take taken takes term terms than thing things
    think third those though through thus time times together topic true turn type typical typically
    understand unless until usage use used useful user users uses using usual usually value values
    various version via want way ways well whatever whether whole will within work works would yet
    """,
    )
)
_ADVERB = re.compile(r"^[a-z]{3,}ly$")  # "Occasionally", "actually", "simply"
# A word in at least this share of the corpus's documents says nothing of this one (when the
# corpus has enough documents for the share to mean something).
COMMON_SHARE = 0.5
MIN_DOCUMENTS = 4


def is_generic(word: str) -> bool:
    """A word no reviewer would keep as a keyword on its own: an adverb or a generic word."""
    lowered = word.lower()
    return lowered in GENERIC_WORDS or bool(_ADVERB.match(lowered))


def term_shares(document_terms: Mapping[str, frozenset[str]]) -> dict[str, float]:
    """Each term's share of the corpus's documents that hold it (empty below MIN_DOCUMENTS)."""
    if len(document_terms) < MIN_DOCUMENTS:
        return {}
    counts = Counter(term for terms in document_terms.values() for term in terms)
    total = len(document_terms)
    return {term: n / total for term, n in counts.items()}


def distinctive_words(words: list[str], shares: Mapping[str, float]) -> list[str]:
    """`words` (a reference's long words, in its order of preference) without the generic ones
    and those most documents of the corpus hold, the rarest in the corpus first."""
    kept = [
        w
        for w in words
        if not is_generic(w) and "'" not in w and "’" not in w and shares.get(w.lower(), 0.0) < COMMON_SHARE
    ]
    return sorted(kept, key=lambda w: shares.get(w.lower(), 0.0))  # stable: ties keep their order
