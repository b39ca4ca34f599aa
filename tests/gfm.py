"""The PR comment as GitHub shows it: rendered by cmark-gfm (GitHub's own CommonMark fork, a
Debian package) with GitHub's extensions, and read back as a tree of elements, so tests can
assert structure (a line outside any quote, one table row per question) instead of substrings.

Without cmark-gfm the tests that need it skip, saying how to install it (`.ci/run` does).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

CMARK_GFM = shutil.which("cmark-gfm")
EXTENSIONS = ("table", "strikethrough", "autolink", "tagfilter")
# Elements that never hold children (html.parser reports no end tag for them).
_VOID = {"br", "hr", "img", "input", "meta", "link"}


def render_gfm(markdown: str) -> str:
    """HTML from cmark-gfm; raw HTML is kept (--unsafe) as GitHub keeps <details>, <sub>, <br>."""
    if CMARK_GFM is None:
        pytest.skip(
            "cmark-gfm is not installed: `apt-get install -y cmark-gfm` (Debian) to check the comment as GitHub renders it"
        )
    args = [CMARK_GFM, "--unsafe", *(a for ext in EXTENSIONS for a in ("-e", ext))]
    done = subprocess.run(args, input=markdown, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


@dataclass
class Element:
    tag: str
    parent: Element | None = None
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find_all(self, tag: str) -> list[Element]:
        found = []
        for child in self.children:
            if isinstance(child, Element):
                if child.tag == tag:
                    found.append(child)
                found.extend(child.find_all(tag))
        return found

    def inside(self, tag: str) -> bool:
        node = self.parent
        while node is not None:
            if node.tag == tag:
                return True
            node = node.parent
        return False

    def blocks(self) -> list[Element]:
        """The top-level elements, in order (what a reader scrolls through)."""
        return [c for c in self.children if isinstance(c, Element)]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("root")
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list) -> None:
        element = Element(tag, self.current)
        self.current.children.append(element)
        if tag not in _VOID:
            self.current = element

    def handle_endtag(self, tag: str) -> None:
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse_html(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def rendered(markdown: str) -> Element:
    return parse_html(render_gfm(markdown))


def section_table(root: Element, heading_prefix: str) -> Element | None:
    """The first table after the <h3> whose text starts with `heading_prefix`, before the next heading."""
    blocks = root.blocks()
    for i, block in enumerate(blocks):
        if block.tag == "h3" and block.text().startswith(heading_prefix):
            for after in blocks[i + 1 :]:
                if after.tag in ("h2", "h3"):
                    return None
                if after.tag == "table":
                    return after
    return None


def body_rows(table: Element) -> list[list[str]]:
    """The cells' text of each body row."""
    [body] = table.find_all("tbody") or [table]
    return [[cell.text().strip() for cell in row.find_all("td")] for row in body.find_all("tr")]
