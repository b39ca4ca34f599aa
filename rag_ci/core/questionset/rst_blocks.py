"""reStructuredText as blocks (rag_ci.core.questionset.doc_blocks).

With docutils installed (it is optional: rag-ci does not depend on it) the document is
parsed by it, with file insertion and raw passthrough off, so an `.. include:: /etc/passwd`
in a corpus reads nothing; Sphinx's roles (`:ref:`, `:doc:`), unknown to plain docutils,
keep their text. Without docutils a plain-text reading does the same for what documents
commonly hold: underlined (and overlined) headings, paragraphs joined across their wrapped
lines, bullet and numbered lists, `::` literal blocks, and directives (`.. note::` keeps its
body, `.. code-block::`, `.. image::`, `.. mermaid::`, comments and the like drop theirs).
`reader()` says which one a run used.

Pure: text in, blocks out.
"""

from __future__ import annotations

import re
from typing import Any

from rag_ci.core.questionset.blocks import Block
from rag_ci.core.questionset.doc_blocks import code, heading, keep_code_when_subject, prose, table_rows

_ROLE = re.compile(r":[\w:+-]+:`~?\.?([^`<]*?)\s*(?:<[^`>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]*>`__?")
_INLINE = (
    (_ROLE, r"\1"),
    (_LINK, r"\1"),
    (re.compile(r"``([^`]+)``"), r"`\1`"),
    (re.compile(r"`([^`]+)`_{1,2}"), r"\1"),
    (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
    (re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*"), r"\1"),
    (re.compile(r"\|[\w -]+\|_{0,2}"), ""),
    (re.compile(r"\[(#|\*|\d+)[\w-]*\]_"), ""),
)
# Admonitions and the like: their body is prose to draft from (MyST's Markdown directives too).
ADMONITION_DIRECTIVES = frozenset(
    [
        "note",
        "warning",
        "tip",
        "hint",
        "important",
        "caution",
        "danger",
        "attention",
        "error",
        "admonition",
        "seealso",
        "versionadded",
        "versionchanged",
        "deprecated",
        "topic",
        "sidebar",
        "rubric",
    ]
)
_KEPT_DIRECTIVES = ADMONITION_DIRECTIVES | {"container"}
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")


def reader() -> str:
    """ "docutils" when it is installed (and reads reStructuredText here), else "plain text"."""
    try:
        import docutils.core  # noqa: F401
    except ImportError:
        return "plain text"
    return "docutils"


_MAX_NESTING = 40  # directives inside directives: deeper ones are read as plain paragraphs
_MAX_INDENT = 120  # columns: a document indented deeper is never handed to docutils (it recurses per level)


def _too_deep(text: str) -> bool:
    return any(len(line) - len(line.lstrip(" \t")) > _MAX_INDENT for line in text.split("\n"))


def rst_blocks(text: str) -> list[Block]:
    if reader() == "docutils" and not _too_deep(text):
        try:
            return _docutils_blocks(text)
        except Exception:
            pass
    return plain_rst_blocks(text)


def rst_inline(text: str) -> str:
    """reST inline markup as prose: roles and links keep their text, ``code`` in backticks."""
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


# -- docutils ------------------------------------------------------------------------------


# Nothing read from outside the text (no file insertion, no raw passthrough), nothing reported.
_DOCUTILS_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,
    "syntax_highlight": "none",
    "_disable_config": True,
    "input_encoding": "unicode",
}


def _docutils_blocks(text: str) -> list[Block]:
    import docutils.core

    tree = docutils.core.publish_doctree(text, settings_overrides=dict(_DOCUTILS_SETTINGS))
    blocks: list[Block | None] = []
    _docutils_walk(tree, 0, False, blocks)
    return keep_code_when_subject(blocks)


def _docutils_inline(node: Any) -> tuple[str, str]:
    """A node's text as a reader sees it, and the text of its links."""
    from docutils import nodes

    parts, linked = [], []
    for child in node.children:
        if isinstance(
            child,
            (
                nodes.image,
                nodes.footnote_reference,
                nodes.citation_reference,
                nodes.target,
                nodes.substitution_reference,
            ),
        ):
            continue
        if isinstance(child, nodes.Text):
            parts.append(str(child).replace("\n", " "))  # a wrapped line, not a break
        elif isinstance(child, nodes.literal):
            parts.append(f"`{child.astext()}`")
        elif isinstance(child, nodes.problematic):  # a Sphinx role docutils does not know
            parts.append(rst_inline(child.astext()))
        elif isinstance(child, nodes.reference):
            shown = child.astext()
            parts.append(shown)
            linked.append(shown)
        else:
            shown, inner = _docutils_inline(child)
            parts.append(shown)
            linked.append(inner)
    return "".join(parts), " ".join(x for x in linked if x)


def _docutils_walk(node: Any, depth: int, in_item: bool, blocks: list[Block | None]) -> None:
    """The blocks of `node`'s children, appended to `blocks`: a section one heading level
    deeper, a list item's first paragraph an item, what a reader does not see left out."""
    from docutils import nodes

    for child in node.children:
        if isinstance(child, nodes.section):
            _docutils_walk(child, depth + 1, False, blocks)
        elif isinstance(child, nodes.title):
            blocks.append(heading(_docutils_inline(child)[0], max(1, depth)))
        elif isinstance(child, nodes.paragraph):
            shown, linked = _docutils_inline(child)
            blocks.append(
                prose("item", f"- {shown}", linked) if in_item else prose("paragraph", shown, linked)
            )
            in_item = False  # an item's later paragraphs are paragraphs
        elif isinstance(child, nodes.list_item):
            _docutils_walk(child, depth, True, blocks)
        elif isinstance(child, nodes.literal_block):
            classes = [c for c in child.get("classes", []) if c != "code"]
            blocks.append(code(child.astext(), classes[0] if classes else ""))
        elif isinstance(child, nodes.table):
            rows = [
                [
                    _docutils_inline(entry.children[0]) if entry.children else ("", "")
                    for entry in row.children
                ]
                for row in child.findall(nodes.row)
            ]
            blocks.extend(table_rows(rows))
        elif isinstance(
            child,
            (
                nodes.comment,
                nodes.system_message,
                nodes.substitution_definition,
                nodes.target,
                nodes.image,
                nodes.figure,
                nodes.raw,
                nodes.footnote,
                nodes.citation,
            ),
        ):
            continue
        elif isinstance(child, nodes.Element):
            _docutils_walk(child, depth, in_item, blocks)


# -- plain text ----------------------------------------------------------------------------


def plain_rst_blocks(text: str, depth: int = 0) -> list[Block]:
    """reStructuredText read as plain text that knows its headings, lists, literal blocks and
    directives; past _MAX_NESTING directives deep, a body is read as plain paragraphs (no recursion)."""
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[Block | None] = []
    styles: list[tuple[str, bool]] = []  # heading styles in order of appearance: their level
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        title = _title_at(lines, i)
        if title is not None:
            text_line, style, used = title
            if style not in styles:
                styles.append(style)
            blocks.append(heading(rst_inline(text_line), styles.index(style) + 1))
            i += used
            continue
        directive = _DIRECTIVE.match(line.strip()) if not line[:1].isspace() else None
        if directive or line.startswith(".."):
            body, i = _indented(lines, i + 1)
            name = directive.group(1).lower() if directive else ""
            if name in _KEPT_DIRECTIVES and depth < _MAX_NESTING:
                blocks += plain_rst_blocks("\n".join(body), depth + 1)
            elif name in _KEPT_DIRECTIVES:
                kept = [b.strip() for b in body if b.strip() and not _DIRECTIVE.match(b.strip())]
                blocks += _paragraph_blocks(kept)
            elif name in ("code-block", "code", "sourcecode", "highlight") and directive:
                blocks.append(
                    code("\n".join(b for b in body if not b.strip().startswith(":")), directive.group(2))
                )
            continue
        paragraph = []
        while i < len(lines) and lines[i].strip() and _title_at(lines, i) is None:
            paragraph.append(lines[i].strip())
            i += 1
        blocks += _paragraph_blocks(paragraph)
        if paragraph and paragraph[-1].endswith("::"):
            body, i = _indented(lines, i)
            blocks.append(code("\n".join(body)))
    return keep_code_when_subject(blocks)


def _title_at(lines: list[str], i: int) -> tuple[str, tuple[str, bool], int] | None:
    """(title, (underline character, overlined), lines used) when a heading starts at line i."""
    line = lines[i]
    over = _UNDERLINE.match(line)
    if over and i + 2 < len(lines) and lines[i + 1].strip() and _UNDERLINE.match(lines[i + 2]):
        return lines[i + 1].strip(), (over.group(1), True), 3
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    under = _UNDERLINE.match(nxt)
    if (
        not over
        and under
        and line.strip()
        and not line[:1].isspace()
        and len(nxt.rstrip()) >= len(line.rstrip()) - 1
    ):
        return line.strip(), (under.group(1), False), 2
    return None


def _indented(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented body from line i (blank lines inside it kept), dedented, and the line after it."""
    body = []
    while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
        body.append(lines[i])
        i += 1
    indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
    return [b[indent:] for b in body], i


def _literal_marker_gone(text: str) -> str:
    """reST's "Example::" reads "Example:", and "Example ::" reads "Example"."""
    if text.endswith(" ::"):
        return text[:-3].rstrip()
    return text[:-1] if text.endswith("::") else text


def _paragraph_blocks(lines: list[str]) -> list[Block | None]:
    if not lines:
        return []
    marker = re.compile(r"^([-*+•]|\d+[.)]|#\.)\s+")
    if not marker.match(lines[0]):
        return [prose("paragraph", rst_inline(_literal_marker_gone(" ".join(lines))))]
    items: list[list[str]] = []
    for line in lines:
        if marker.match(line) or not items:
            items.append([marker.sub("", line)])
        else:
            items[-1].append(line)
    return [prose("item", "- " + rst_inline(_literal_marker_gone(" ".join(item)))) for item in items]
