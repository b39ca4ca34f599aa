"""A document cut into passages, the contexts `rag-ci questions generate` drafts from.

Deterministic: the same text always gives the same passages, so a draft's provenance
(the passage's hash) finds its passage again on the review page. A document is read by a
parser of its format (rag_ci.core.questionset.doc_blocks: Markdown, HTML, reStructuredText,
plain text) into the blocks a reader reads: headings, paragraphs and list items, and code
only where it is the subject; images, badges, tags, link lists, tables without sentences
and diagrams are gone. A passage is a heading section of those blocks, written back as
light Markdown (`## Heading`, paragraphs, `- item`); a section longer than `max_words` is
split between blocks (a paragraph longer than that between sentences, never inside one),
and a section shorter than `min_words` (a title, a one-line section) joins the next one. A
section left without prose (only a heading, only code) is no passage. Source code and data
files (`.py`, `.json`, `.yaml`...) hold no prose to draft from: no passages.

Pure: text in, passages out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from rag_ci.core.base.text import drop_controls
from rag_ci.core.questionset.blocks import Block
from rag_ci.core.questionset.doc_blocks import plain_text_blocks
from rag_ci.core.questionset.html_blocks import html_blocks
from rag_ci.core.questionset.markdown_blocks import markdown_blocks
from rag_ci.core.questionset.rst_blocks import rst_blocks

# Past this many characters a document is drafted from its head only (cut at a line break): a
# multi-megabyte table or one-line document would otherwise take minutes to parse, for
# passages nobody reviews. The review page cuts the same way, so hashes agree.
MAX_DOCUMENT_CHARS = 1_000_000
MAX_WORDS = 220
MIN_WORDS = 25
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
FORMATS = {
    "markdown": (".md", ".markdown", ".mdx", ".mkd", ".mdown"),
    "html": (".html", ".htm", ".xhtml"),
    "rst": (".rst", ".rest"),
    "text": (".txt", ".text"),
}
NOT_PROSE = (
    ".py",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".java",
    ".go",
    ".rs",
    ".c",
    ".h",
    ".cpp",
    ".cs",
    ".rb",
    ".php",
    ".sh",
    ".json",
    ".jsonl",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
    ".cfg",
    ".xml",
    ".csv",
    ".tsv",
    ".css",
    ".scss",
    ".sql",
    ".lock",
    ".svg",
    ".ipynb",
)


def document_format(path: str, text: str = "") -> str | None:
    """ "markdown", "html", "rst" or "text" by the file's extension (a file without a known
    one is Markdown when it has Markdown headings or fences, HTML when it starts as a page,
    else plain text); None for source code and data."""
    lower = path.lower()
    if lower.endswith(NOT_PROSE):
        return None
    for name, extensions in FORMATS.items():
        if lower.endswith(extensions):
            return name
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype html", "<html")):
        return "html"
    if re.search(r"^\s{0,3}(#{1,6}\s|```)", text, re.M):
        return "markdown"
    return "text"


def document_blocks(path: str, text: str) -> list[Block]:
    """The blocks of one document, by its format, without its control characters (ESC...)."""
    reader = {"markdown": markdown_blocks, "html": html_blocks, "rst": rst_blocks, "text": plain_text_blocks}
    text = drop_controls(text)
    found = document_format(path, text)
    return [] if found is None else reader[found](text)


@dataclass(frozen=True)
class Passage:
    corpus: str
    path: str  # the document, inside its corpus folder
    index: int  # 0-based, in document order
    heading: str  # the heading of the section it starts in ("" before the first)
    text: str  # the document's prose, as light Markdown (headings, paragraphs, items)

    @property
    def hash(self) -> str:
        """Its identity in a draft's provenance: where it comes from and what it says."""
        return hashlib.sha256(f"{self.corpus}/{self.path}\n{self.text}".encode()).hexdigest()[:16]

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def label(self) -> str:
        return f"{self.corpus}/{self.path} §{self.index + 1}" + (f" ({self.heading})" if self.heading else "")


def _sections(blocks: list[Block]) -> list[tuple[str, list[Block]]]:
    """(heading, blocks) in order, the heading block first; sections without prose left out."""
    sections: list[tuple[str, list[Block]]] = [("", [])]
    for block in blocks:
        if block.kind == "heading":
            sections.append((block.text, [block]))
        else:
            sections[-1][1].append(block)
    return [(h, bs) for h, bs in sections if any(b.kind in ("paragraph", "item") for b in bs)]


def _pieces(block: Block, max_words: int) -> list[str]:
    """A block as text, or a long paragraph's sentences grouped under max_words."""
    paragraph = block.rendered
    if block.kind != "paragraph" or len(paragraph.split()) <= max_words:
        return [paragraph]
    pieces: list[str] = []
    current: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        if current and len(" ".join(current + [sentence]).split()) > max_words:
            pieces.append(" ".join(current))
            current = []
        current.append(sentence)
    if current:
        pieces.append(" ".join(current))
    return pieces


def _join(parts: list[tuple[str, str]]) -> str:
    """Blocks as text: a blank line between them, one line break between items of a list."""
    out = ""
    for n, (kind, text) in enumerate(parts):
        if n:
            out += "\n" if kind == "item" and parts[n - 1][0] == "item" else "\n\n"
        out += text
    return out


def _chunks(blocks: list[Block], max_words: int) -> list[tuple[str, str]]:
    """(heading, text) per section, a long section split between its blocks."""
    chunks: list[tuple[str, str]] = []
    for heading, section in _sections(blocks):
        current: list[tuple[str, str]] = []
        for block in section:
            for piece in _pieces(block, max_words):
                if current and len(_join(current + [(block.kind, piece)]).split()) > max_words:
                    chunks.append((heading, _join(current)))
                    current = []
                current.append((block.kind, piece))
        if current:
            chunks.append((heading, _join(current)))
    return chunks


def cut_passages(
    corpus: str, path: str, text: str, *, max_words: int = MAX_WORDS, min_words: int = MIN_WORDS
) -> list[Passage]:
    """The passages of one document, in order (its first MAX_DOCUMENT_CHARS characters).
    Each document is parsed once per process: generate and the review page ask again."""
    return list(_cut_once(corpus, path, text, max_words, min_words))


@lru_cache(maxsize=256)
def _cut_once(corpus: str, path: str, text: str, max_words: int, min_words: int) -> tuple[Passage, ...]:
    if len(text) > MAX_DOCUMENT_CHARS:
        head = text[:MAX_DOCUMENT_CHARS]
        text = head[: head.rfind("\n")] if "\n" in head else head
    merged: list[tuple[str, str]] = []
    carry: tuple[str, str] | None = None  # a short chunk waiting to join the next one
    for heading, chunk in _chunks(document_blocks(path, text), max_words):
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
    return tuple(
        Passage(corpus, path, i, heading, chunk) for i, (heading, chunk) in enumerate(merged) if chunk.strip()
    )
