"""A document cut into passages, the contexts `rag-ci questions generate` drafts from.

Deterministic: the same text always gives the same passages, so a draft's provenance
(the passage's hash) finds its passage again on the review page. A passage is a heading
section of the document, kept verbatim (the keywords must occur in it word for word);
a section longer than `max_words` is split between paragraphs (a paragraph longer than
that between sentences), and a section shorter than `min_words` (a title, a one-line
section) joins the next one. Markdown and reStructuredText-style `#` headings are
sections; a text without headings is a run of paragraphs.

Pure: text in, passages out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

MAX_WORDS = 220
MIN_WORDS = 25
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class Passage:
    corpus: str
    path: str  # the document, inside its corpus folder
    index: int  # 0-based, in document order
    heading: str  # the heading of the section it starts in ("" before the first)
    text: str  # verbatim from the document

    @property
    def hash(self) -> str:
        """Its identity in a draft's provenance: where it comes from and what it says."""
        return hashlib.sha256(f"{self.corpus}/{self.path}\n{self.text}".encode("utf-8")).hexdigest()[:16]

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def label(self) -> str:
        return f"{self.corpus}/{self.path} §{self.index + 1}" + (f" ({self.heading})" if self.heading else "")


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) in order; a paragraph keeps its lines; the heading line starts its section."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    paragraph: list[str] = []

    def close() -> None:
        if paragraph:
            sections[-1][1].append("\n".join(paragraph))
            paragraph.clear()

    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            close()
            sections.append((heading.group(1), [line.strip()]))
        elif not line.strip():
            close()
        else:
            paragraph.append(line.rstrip())
    close()
    return [(h, paras) for h, paras in sections if paras]


def _pieces(paragraph: str, max_words: int) -> list[str]:
    """A paragraph, or its sentences grouped under max_words when it is longer."""
    if len(paragraph.split()) <= max_words:
        return [paragraph]
    pieces, current = [], []
    for sentence in _SENTENCE_END.split(paragraph):
        if current and len(" ".join(current + [sentence]).split()) > max_words:
            pieces.append(" ".join(current))
            current = []
        current.append(sentence)
    if current:
        pieces.append(" ".join(current))
    return pieces


def cut_passages(corpus: str, path: str, text: str, *, max_words: int = MAX_WORDS,
                 min_words: int = MIN_WORDS) -> list[Passage]:
    """The passages of one document, in order."""
    chunks: list[tuple[str, str]] = []  # (heading, text)
    for heading, paragraphs in _sections(text):
        current: list[str] = []
        for paragraph in paragraphs:
            for piece in _pieces(paragraph, max_words):
                if current and len("\n\n".join(current + [piece]).split()) > max_words:
                    chunks.append((heading, "\n\n".join(current)))
                    current = []
                current.append(piece)
        if current:
            chunks.append((heading, "\n\n".join(current)))
    merged: list[tuple[str, str]] = []
    carry: tuple[str, str] | None = None  # a short chunk waiting to join the next one
    for heading, chunk in chunks:
        if carry is not None:
            heading, chunk = carry[0] or heading, carry[1] + "\n\n" + chunk
            carry = None
        if len(chunk.split()) < min_words:
            carry = (heading, chunk)
            continue
        merged.append((heading, chunk))
    if carry is not None:  # a short last chunk joins the one before it (or stands alone)
        if merged:
            heading, chunk = merged.pop()
            merged.append((heading, chunk + "\n\n" + carry[1]))
        else:
            merged.append(carry)
    return [Passage(corpus, path, i, heading, chunk) for i, (heading, chunk) in enumerate(merged) if chunk.strip()]
