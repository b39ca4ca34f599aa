"""HTML as blocks (rag_ci.core.questionset.doc_blocks), read with the standard library's parser.

A whole page or an HTML block inside Markdown: headings, paragraphs, list items, table rows
and `<pre>` code become blocks; what a reader does not read as prose is dropped with its
content (`<script>`, `<style>`, `<nav>`, `<svg>`, `<img>`, forms, the `<head>` but its
title), and so are link lists and badge rows (doc_blocks.prose). Entities are decoded.

Pure: text in, blocks out.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from rag_ci.core.questionset.blocks import Block
from rag_ci.core.questionset.doc_blocks import code, heading, keep_code_when_subject, prose, table_rows

_DROPPED = frozenset(
    [
        "script",
        "style",
        "noscript",
        "svg",
        "math",
        "nav",
        "form",
        "button",
        "select",
        "textarea",
        "template",
        "iframe",
        "object",
        "canvas",
        "head",
        "audio",
        "video",
        "picture",
        "map",
    ]
)
_BLOCK = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "blockquote",
        "figure",
        "figcaption",
        "dl",
        "dt",
        "dd",
        "ul",
        "ol",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "center",
        "details",
        "summary",
        "address",
        "hr",
        "body",
        "html",
    ]
)
_VOID = frozenset(
    ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]
)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block | None] = []
        self.text: list[str] = []
        self.linked: list[str] = []
        self.kind = "paragraph"  # what the text gathered now becomes
        self.level = 0
        self.dropped = 0  # depth inside a dropped element
        self.links = 0
        self.pre: list[str] | None = None
        self.pre_language = ""
        self.rows: list[list[tuple[str, str]]] | None = None
        self.in_cell = False  # inside a table cell, block tags only separate words

    def flush(self) -> None:
        """The text gathered so far becomes a block (inside a cell: a space, the cell goes on)."""
        if self.in_cell:
            self.text.append(" ")
            return
        text, linked = "".join(self.text), " ".join(self.linked)
        self.text, self.linked = [], []
        if self.kind == "heading":
            self.blocks.append(heading(text, self.level))
        elif text.strip():
            self.blocks.append(prose(self.kind, f"- {text.strip()}" if self.kind == "item" else text, linked))
        self.kind, self.level = "paragraph", 0

    def end_cell(self) -> None:
        if self.in_cell and self.rows:
            self.rows[-1].append(("".join(self.text), " ".join(self.linked)))
        self.text, self.linked, self.in_cell = [], [], False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.dropped:
            if tag not in _VOID:
                self.dropped += 1
            return
        if tag in _DROPPED:
            self.flush()
            self.dropped = 1
            return
        if tag == "br":
            self.text.append("\n")
        elif tag == "a":
            self.links += 1
        elif tag == "code" and self.pre is None:
            self.text.append("`")
        elif tag == "pre":
            self.flush()
            self.pre = []
            self.pre_language = next((v.split("-", 1)[-1] for k, v in attrs if k == "class" and v), "")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.flush()
            self.kind, self.level = "heading", int(tag[1])
        elif tag == "li":
            self.flush()
            self.kind = "item"
        elif tag == "table":
            self.flush()
            self.rows = []
        elif tag == "tr" and self.rows is not None:
            self.end_cell()
            self.rows.append([])
        elif tag in ("td", "th") and self.rows is not None:
            self.end_cell()
            self.in_cell = True
        elif tag in _BLOCK:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if self.dropped:
            self.dropped -= 1
            return
        if tag == "a":
            self.links = max(0, self.links - 1)
        elif tag == "code" and self.pre is None:
            self.text.append("`")
        elif tag == "pre" and self.pre is not None:
            self.blocks.append(code("".join(self.pre), self.pre_language))
            self.pre = None
        elif tag == "table" and self.rows is not None:
            self.end_cell()
            rows, self.rows = self.rows, None
            self.blocks += table_rows([r for r in rows if r])
        elif tag in ("td", "th") and self.rows is not None:
            self.end_cell()
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6", "li") or tag in _BLOCK:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.dropped:
            return
        if self.pre is not None:
            self.pre.append(data)
            return
        self.text.append(data)
        if self.links:
            self.linked.append(data)


def html_blocks(text: str, *, fragment: bool = False) -> list[Block]:
    """The blocks of an HTML page, or of an HTML fragment (`fragment`: a block inside Markdown,
    whose code is judged with the Markdown around it)."""
    reader = _Reader()
    # `<![x` that is no marked section Python's parser knows stops it (AssertionError in 3.11): it is text.
    text = re.sub(r"<!\[(?!CDATA\[|if\b|endif\b|else\b)", "&lt;![", text, flags=re.I)
    try:
        reader.feed(text)
        reader.close()
    except (AssertionError, ValueError):  # anything else the parser cannot read ends the page there
        pass
    reader.in_cell = False
    reader.flush()
    blocks = [b for b in reader.blocks if b is not None]
    return blocks if fragment else keep_code_when_subject(blocks)
