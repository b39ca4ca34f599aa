"""A reference whose subject is its section's heading, with the heading carried into it.

Under the heading `HTTPX_LOG_LEVEL`, "If this environment variable is set, …" is a clear
sentence on the page and a riddle in a draft: the reader cannot tell what "this" is
(rag_ci.core.questionset.reference_standalone calls it dangling). When the heading names the
subject, the reference is kept with the heading in front of it, in one form for every writer:

    `HTTPX_LOG_LEVEL`: If this environment variable is set, …
    Slotted classes: They are faster and use less memory.

an identifier heading in backticks, a heading of words as it reads. A heading that names no
subject — generic ("Overview", "Notes", "How it works"), a question ("Why not dataclasses?"),
a task ("Deploy your site"), a title of more than three words or with an article ("Dataclasses
Enter The Arena") — is not carried: the reference stays dropped. A heading of words must also
agree in number with the pronoun it stands for ("Slotted classes" for "they", not for "it").

Pure: strings in, a reference or None out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_ci.core.questionset.distinctive import is_generic
from rag_ci.core.questionset.draft_text import STOP_WORDS

MAX_HEADING_WORDS = 3  # past this a heading is a title ("Dataclasses Enter The Arena"), not a name
# Headings that organise a page and name nothing in it (beyond distinctive.GENERIC_WORDS).
_ORGANISING = frozenset(
    re.findall(
        r"\w+",
        """
    introduction intro summary background faq faqs caveat caveats warning warnings tip tips basics
    misc miscellaneous conclusion conclusions motivation rationale discussion remarks troubleshooting
    appendix glossary prerequisites requirements installation install setup configuration options
    reference api changelog history contents toc what why how when where who tl dr philosophy
    principles goals design features limitations concepts usage
        """,
    )
)
# A heading that is a task or a claim ("Deploy your site", "What attrs Is Not") names no subject
# a pronoun can stand for: it is addressed to the reader, or holds a verb.
_NOT_A_NAME = frozenset(
    re.findall(
        r"\w+",
        """
    is are was were be been not do does did can could should will would you your we our us i my
    add build choose configure create define deploy enable get install make manage migrate run set
    start translate update upgrade use write customize debug extend handle test avoid call pass read
    remove learn understand see try let lets
        """,
    )
)
_PLURAL_PRONOUN = re.compile(r"^(?:[\w'’.-]+\s+){0,3}?[\w'’.-]*,?\s*(?:they|these|those|them|their)\b", re.I)
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_IDENTIFIER = re.compile(r"^(?:--?)?[\w.:/-]*[_.:/-][\w.:/()-]*$|^[A-Z][A-Z0-9_]{2,}$|^[\w.]+\(\)$")


def _clean(heading: str) -> str:
    """The heading as a reader sees it: no anchor (`{#id}`), no section number, no emphasis."""
    text = re.sub(r"\{[^{}]*\}\s*$", "", heading)
    text = re.sub(r"^\d+(?:\.\d+)*\.?\s+", "", text)
    return re.sub(r"[*_]{2}|(?<!\w)[*_](?!\w)", "", text).strip().rstrip(":.").strip()


def subject_of(heading: str) -> str | None:
    """The heading as the subject it names (an identifier in backticks), or None when it names
    no subject (see the module)."""
    text = _clean(heading)
    if not text or text.endswith("?"):
        return None
    bare = text.strip("`")
    if " " not in bare and _IDENTIFIER.match(bare):
        return f"`{bare}`"
    words = re.findall(r"[^\W\d_][\w'-]*", text)
    if not words or len(text.split()) > MAX_HEADING_WORDS or words[0].lower().endswith("ing"):
        return None  # "Getting started", "Using the API": an activity, not a subject
    if any(w.lower() in _NOT_A_NAME or w.lower() in ("a", "an", "the") for w in words):
        return None
    named = [
        w for w in words if w.lower() not in STOP_WORDS and w.lower() not in _ORGANISING and not is_generic(w)
    ]
    return text if named else None


def heading_above(reference: str, heading: str, text: str) -> str | None:
    """The heading of the section that holds the reference in a passage (`heading`: the one it
    starts under, `text`: its light Markdown with later headings as `## …` lines); None when
    the reference is not the passage's words and the passage has several sections."""
    start = " ".join(reference.split()[:6])
    flat = re.sub(r"[ \t]+", " ", text)
    at = flat.find(start)
    inner = list(_HEADING_LINE.finditer(flat))
    if at == -1:
        return heading if not inner else None
    above = [m.group(1) for m in inner if m.start() < at]
    return above[-1] if above else heading


def with_heading(reference: str, passages: Sequence[tuple[str, str]]) -> str | None:
    """`Subject: reference` when a passage (heading, text) holds the reference under a heading
    that names its subject, else None."""
    for heading, text in passages:
        found = heading_above(reference, heading, text)
        subject = subject_of(found) if found else None
        if subject is not None and _agrees(subject, reference):
            return f"{subject}: {' '.join(reference.split())}"
    return None


def _agrees(subject: str, reference: str) -> bool:
    """A heading of words stands for "they"/"these" only when plural ("Slotted classes"), for
    "it"/"this" only when singular; an identifier stands for either (`--workers`: "It sets …")."""
    if subject.startswith("`"):
        return True
    plural = subject.split()[-1].lower().endswith("s")
    return plural == bool(_PLURAL_PRONOUN.match(" ".join(reference.split())))
