"""A document as the blocks a reader sees: headings, paragraphs, list items and (rarely) code.

`questions generate` drafts from passages of prose (rag_ci.core.questionset.passages), so
what a reader does not read as prose is left out here, whatever the format: images and
badges, HTML tags, link lists (a table of contents, a row of "Deploy with ..." links),
diagrams (mermaid, PlantUML, Graphviz), tables without sentences, MkDocs admonition and
tab markers, and code, except a short block the prose right before it introduces (ending
with ":"): then the code is the subject ("To start the server, run:"). Each format has its
parser: Markdown (markdown-it-py, rag_ci.core.questionset.markdown_blocks), HTML (the
standard library's html.parser, .html_blocks), reStructuredText (.rst_blocks: docutils when
it is installed, else a plain-text reading that knows its headings and directives), and
plain text (paragraphs between blank lines, here).

A block's text is clean prose: inline markup gone (emphasis markers, link targets, tags),
inline code kept in backticks, soft line breaks joined, so a sentence is never cut by the
source's line wrapping.

Pure: text in, blocks out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from rag_ci.core.questionset.block_repair import repair_blocks
from rag_ci.core.questionset.blocks import Block
from rag_ci.core.questionset.template_syntax import TEMPLATE_EXPRESSION, without_template_tags

MAX_CODE_LINES = 15  # a longer block is an example to read, not a fact to ask about
DIAGRAM_LANGUAGES = frozenset(
    [
        "mermaid",
        "plantuml",
        "puml",
        "uml",
        "dot",
        "graphviz",
        "ditaa",
        "d2",
        "nomnoml",
        "svgbob",
        "wavedrom",
        "vega",
        "vega-lite",
        "flowchart",
        "sequence",
        "bob",
        "ascii-art",
        "diagram",
    ]
)
_DIAGRAM_START = re.compile(
    r"^\s*(sequenceDiagram|classDiagram|stateDiagram|erDiagram|gantt|pie\b|journey|gitGraph|mindmap|"
    r"flowchart\s|graph\s+(TD|TB|BT|LR|RL)\b|@startuml|digraph\s|strict\s+digraph|graph\s*\{)"
)
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
# `[text][ref]` whose ref is defined elsewhere (MkDocs)
_UNRESOLVED_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]+\]:?")  # `[^1]`, and a footnote's own `[^1]:`
# MkDocs attribute lists (`{ #install }`, `{: .md-button }`, `{ data-toc-label="Sync" }` after an id) and
# snippet includes (`{* ../docs_src/app.py hl[3] *}`), MDX comments (`{/* truncate */}`): markup a
# reader never sees.
_ATTRIBUTES = re.compile(r"\{:?\s*[#.][^{}\n]*\}|\{:[^{}\n]*\}|\{\*.*?\*\}|\{/\*.*?\*/\}")
_LEFTOVER_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>`]*)?/?>")
# MkDocs admonitions and tabs, reST directives, MyST's colon fences (`:::{note}`) and targets (`(options)=`).
_DIRECTIVE_LINE = re.compile(
    r"^\s*(?:!!!|\?\?\?\+?|===)\s.*$|^\s*///.*$|^\s*-{2}8<-{2}.*$|^\s*\.\.\s+[\w:-]+::.*$|^\s*:::+.*$|^\s*\([\w.:-]+\)=\s*$",
    re.M,
)
_WORD = re.compile(r"\w[\w'’.-]*")
_FILLER = re.compile(r"\blorem ipsum\b", re.I)  # "Lorem ipsum dolor sit amet…", a page's placeholder
# A paragraph that only points to a link: "See the installation documentation for more information."
_POINTER = re.compile(
    r"^(?:\(?\s*)(?:see|read|check out|refer to|learn more|visit|head over|take a look|for more|more info|"
    r"you (?:can|may) (?:also )?(?:read|find|check|learn|see|refer))\b|\bfor more (?:information|details)\b|"
    r"\bto learn more\b",
    re.I,
)


def words(text: str) -> int:
    return len(_WORD.findall(text))


def clean_inline(text: str) -> str:
    """Inline text without the markup a parser left in it: unresolved `[text][ref]` links,
    stray tags, no-break spaces, runs of blanks (line breaks kept)."""
    text = without_template_tags(text)  # before the attribute lists: `{{< x >}}` holds braces too
    text = _UNRESOLVED_LINK.sub(r"\1", _FOOTNOTE.sub("", text.replace("\xa0", " ").replace("\u200b", "")))
    text = _outside_code(text, lambda part: _ATTRIBUTES.sub("", _LEFTOVER_TAG.sub("", part)))
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text outside `inline code` spans (code keeps its `<str>`)."""
    parts = re.split(r"(`[^`\n]+`)", text)
    return "".join(
        part if part.startswith("`") and part.endswith("`") and len(part) > 1 else change(part)
        for part in parts
    )


def prose(kind: str, text: str, linked: str = "") -> Block | None:
    """A paragraph or list item from its rendered text (`linked`: the text of its links), or
    None when a reader would not read it as prose: empty, only a directive marker, placeholder
    text ("Lorem ipsum dolor sit amet…"), only
    links or URLs (a link list, a badge row, "Documentation: https://..."), or a short
    pointer to a link ("See the installation documentation for more information.")."""
    outside_code = re.sub(r"`[^`\n]+`", "", text)  # `{{ x }}` in a code span documents a template
    if TEMPLATE_EXPRESSION.search(without_template_tags(outside_code)):  # words only the site knows
        return None
    if _FILLER.search(outside_code):  # a template's placeholder text: nothing to ask about
        return None
    text = clean_inline(_DIRECTIVE_LINE.sub("", text))
    if not text:
        return None
    total = words(text)
    outside = words(_URL.sub(" ", text)) - words(_URL.sub(" ", linked))  # an autolink's URL is counted once
    if total == 0 or ((linked or _URL.search(text)) and (outside < 3 or outside < 0.4 * total)):
        return None
    if linked and outside <= 12 and _POINTER.search(text.lstrip("- 0123456789.")):
        return None
    if not re.search(r"[^\W\d_]", text):  # "|", "---", "▶️ 2": no words
        return None
    return Block(kind, text)


def heading(text: str, level: int) -> Block | None:
    text = clean_inline(text).replace("\n", " ").strip().strip("#").strip()
    return Block("heading", text, level=level) if re.search(r"[^\W\d_]", text) else None


def is_diagram(language: str, code: str) -> bool:
    first = next((line for line in code.splitlines() if line.strip()), "")
    return language.lower() in DIAGRAM_LANGUAGES or bool(_DIAGRAM_START.match(first))


def code(text: str, language: str = "") -> Block | None:
    text = text.strip("\n")
    if not text.strip():
        return None
    return Block("code", text.rstrip(), language=language.split()[0] if language.split() else "")


def table_rows(rows: Sequence[Sequence[tuple[str, str]]]) -> list[Block]:
    """A table's body rows as prose where a row says something in words: "name: description"
    for each row with a cell of 6+ words; a table of values only (no such cell) is left out."""
    out = []
    for cells in rows:
        texts = [(clean_inline(t).replace("\n", " "), linked) for t, linked in cells]
        long = [t for t, _ in texts[1:] if words(t) >= 6]
        if not texts or not long:
            continue
        name = texts[0][0].strip().rstrip(":")
        sentence = (f"{name}: " if name else "") + " ".join(long)
        block = prose("paragraph", sentence)
        if block is not None:
            out.append(block)
    return out


def keep_code_when_subject(blocks: Iterable[Block | None]) -> list[Block]:
    """The blocks without their code, but a short, non-diagram code block right after prose
    that introduces it (the prose ends with ":"); a heading or a paragraph left without words
    goes too; then what a reviewer rejects on sight is dropped or repaired (.block_repair)."""
    out: list[Block] = []
    for block in blocks:
        if block is None:
            continue
        if block.kind == "code":
            introduced = (
                bool(out) and out[-1].kind in ("paragraph", "item") and out[-1].text.rstrip().endswith(":")
            )
            if (
                not introduced
                or is_diagram(block.language, block.text)
                or len(block.text.splitlines()) > MAX_CODE_LINES
            ):
                continue
        out.append(block)
    return repair_blocks(out)


def plain_text_blocks(text: str) -> list[Block]:
    """Plain text: paragraphs between blank lines; a line wrapped inside a paragraph is joined
    (a sentence runs on), a short first line standing alone above a paragraph is its heading."""
    blocks: list[Block | None] = []
    for paragraph in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) == 1 and _looks_like_title(lines[0]):
            blocks.append(heading(lines[0], 2))
            continue
        if all(re.match(r"^([-*•]|\d+[.)])\s+", line) for line in lines):  # a list: one item a line
            blocks += [prose("item", re.sub(r"^([-*•]|\d+[.)])\s+", "- ", line)) for line in lines]
            continue
        blocks.append(prose("paragraph", " ".join(lines)))
    return keep_code_when_subject(blocks)


def _looks_like_title(line: str) -> bool:
    return words(line) <= 10 and not re.search(r"[.!?,;:]$", line) and line[:1].isupper()
