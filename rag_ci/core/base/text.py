"""Text helpers of the core: what keyword matching compares, whether an answer declines, and
untrusted text with its control characters made visible."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
# C0 and C1 controls and DEL: ESC (and CSI, U+009B) start terminal escape sequences (set the
# window title, clear the screen, hide the rest of a line); the others move the cursor or ring.
_CONTROLS = "\x00-\x1f\x7f-\x9f"
# Bidi controls and zero-width characters: they reorder or hide what a reader sees (a
# reviewer reading an answer, a question or a passage must see what the text says).
_INVISIBLE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
INVISIBLE = re.compile(f"[{_INVISIBLE}]")
_UNSAFE = {
    keep: re.compile(
        f"[{_CONTROLS}{_INVISIBLE}]" if not keep else f"(?![{re.escape(keep)}])[{_CONTROLS}{_INVISIBLE}]"
    )
    for keep in ("", "\t\n", "\t\n\r")
}


def visible_controls(text: str, keep: str = "\t\n") -> str:
    """Untrusted text for a person's terminal: every C0/C1 control (ESC first) written as
    `\\xNN`, every bidi or zero-width control as `\\uXXXX`, except the characters in `keep`
    (tab and line feed, or none: "")."""
    pattern = _UNSAFE.get(keep) or re.compile(f"(?![{re.escape(keep)}])[{_CONTROLS}{_INVISIBLE}]")
    return pattern.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


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


_DROPPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def drop_controls(text: str) -> str:
    """`text` without its C0/C1 controls (tab and line breaks kept): what is drafted from a
    document never carries its escape sequences on into questions.yml."""
    return _DROPPED.sub("", text)
