"""Markdown as blocks (rag_ci.core.questionset.doc_blocks), parsed by markdown-it-py.

CommonMark plus tables, the way GitHub and MkDocs read a README (a YAML or TOML front
matter block at the top is metadata, not text): a `# comment` inside a
fenced code block is code, not a heading; an image inside a link (a badge) is no text;
an HTML block is read by the HTML reader (.html_blocks). MkDocs' admonitions (`!!! note`),
collapsible blocks (`???`) and content tabs (`=== "pip"`) indent their content by four
spaces, which CommonMark would read as code: their marker line is dropped and their content
un-indented before parsing, so a fence inside a tab stays a fence and its prose stays prose;
pymdownx blocks (`/// note | Title` ... `///`) and snippet lines (`--8<-- "file"`) lose their marker lines.
Colon fences (Docusaurus' `:::tip`, MyST's `:::{note}`) keep their body as Markdown, MDX's
`import`/`export` statements are no text.
MyST (Sphinx's Markdown) is read too: a role ({func}`echo`, {ref}`text <target>`) keeps its
text, a directive fence (```{note}) keeps its prose, ```{eval-rst} is read as reStructuredText,
and ```{toctree}, ```{contents}, ```{image} and the like are no text.

Pure: text in, blocks out (markdown-it-py is a pure-Python parser).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from rag_ci.core.questionset.blocks import Block
from rag_ci.core.questionset.doc_blocks import code, heading, keep_code_when_subject, prose, table_rows
from rag_ci.core.questionset.html_blocks import html_blocks
from rag_ci.core.questionset.rst_blocks import ADMONITION_DIRECTIVES, rst_blocks

_CONTAINER = re.compile(r"^(\s*)(?:!!!|\?\?\?\+?|===)\s")
_BLOCK_MARKER = re.compile(r"^\s*(?:///|-{2}8<-{2})")  # pymdownx blocks' fences and snippet includes
_FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\n.*?\n(?:---|\.\.\.)|\+\+\+[ \t]*\n.*?\n\+\+\+)[ \t]*(?:\n|\Z)", re.S
)
_FENCE = re.compile(r"^\s*(```+|~~~+)")
_PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")
_ROLE_BEFORE = re.compile(r"\{([\w:.+-]+)\}$")  # MyST: the `{func}` right before `echo` in {func}`echo`
# roles whose text is words, not code
_TEXT_ROLES = frozenset(["ref", "doc", "numref", "term", "download", "any", "abbr", "external"])
_NUMBERED_ROLES = {"pep": "PEP", "rfc": "RFC"}  # {pep}`649` is "PEP 649" on the page
_PROSE_DIRECTIVES = ADMONITION_DIRECTIVES | {"margin", "dropdown", "card"}  # MyST / sphinx-design
_CODE_DIRECTIVES = frozenset(["code-block", "code", "sourcecode", "code-cell"])


def unindent_containers(text: str) -> str:
    """MkDocs containers opened: the marker line blank, its indented body moved left by 4."""
    out: list[str] = []
    depth: list[int] = []  # the indentation of each open container's body
    fence: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and depth and indent < depth[-1] and fence is None:
            while depth and indent < depth[-1]:
                depth.pop()
        shift = depth[-1] if depth else 0
        body = line[shift:] if line[:shift].strip() == "" else line.lstrip()
        fenced = _FENCE.match(body)
        if fenced and (fence is None or fenced.group(1).startswith(fence)):
            fence = None if fence is not None else fenced.group(1)[:3]
        elif fence is None and _BLOCK_MARKER.match(
            body
        ):  # `/// note | Title` ... `///`: its lines stay prose
            out.append("")
            continue
        elif fence is None and _CONTAINER.match(body):
            depth.append(shift + len(_CONTAINER.match(body).group(1)) + 4)  # type: ignore[union-attr]
            out.append("")
            continue
        out.append(body)
    return "\n".join(out)


_COLON_FENCE = re.compile(r"^\s*:{3,}")  # Docusaurus `:::tip[Title]` … `:::`, MyST `:::{note}` … `:::`
_FENCE_OPTION = re.compile(r"^\s*:[\w-]+:(?:\s.*)?$")  # MyST's `:class: dropdown` under the fence line
# MDX's ES module lines (`import Tabs from '@theme/Tabs';`, `export const X = (…) => (` … `);`)
_ESM = re.compile(
    r"^(?:import\s+(?:[\w{*][^'\"]*\sfrom\s+)?['\"]|export\s+(?:const|let|var|function|default|\{))"
)


def open_colon_fences(text: str) -> str:
    """Colon-fence admonitions opened (their marker lines blank, their body kept as Markdown) and
    MDX's import/export statements gone (an `export` block up to its closing `;` or blank line);
    code fences untouched."""
    out: list[str] = []
    fence: str | None = None
    in_export = after_marker = False
    for line in text.split("\n"):
        fenced = _FENCE.match(line)
        if fenced and not in_export and (fence is None or fenced.group(1).startswith(fence)):
            fence = None if fence is not None else fenced.group(1)[:3]
        elif fence is None:
            if in_export or _ESM.match(line):
                in_export = (
                    bool(line.strip()) and not line.rstrip().endswith(";") and not line.startswith("import")
                )
                line = ""
            elif _COLON_FENCE.match(line) or (after_marker and _FENCE_OPTION.match(line)):
                after_marker, line = True, ""
                out.append(line)
                continue
        after_marker = False
        out.append(line)
    return "\n".join(out)


def inline_text(token: Token) -> tuple[str, str]:
    """(the text a reader sees, the text of its links) of an inline token: emphasis markers and
    link targets gone, images and HTML tags dropped (a `<br>` is a line break), code in backticks."""
    parts: list[str] = []
    linked: list[str] = []
    in_link = 0
    for child in token.children or []:
        kind = child.type
        if kind == "text":
            piece = child.content
        elif kind == "code_inline":
            role = _ROLE_BEFORE.search(parts[-1]) if parts else None
            if role:  # MyST: {ref}`positional arguments <arguments>` reads "positional arguments"
                parts[-1] = parts[-1][: role.start()]
            piece = _role_text(role.group(1), child.content) if role else f"`{child.content}`"
        elif kind == "softbreak":
            piece = " "
        elif kind == "hardbreak":
            piece = "\n"
        elif kind == "html_inline":
            piece = "\n" if re.match(r"<br\s*/?>", child.content, re.I) else ""
        elif kind == "link_open":
            in_link += 1
            continue
        elif kind == "link_close":
            in_link -= 1
            continue
        else:  # image (its alt text is no prose), emphasis and strike markers
            continue
        parts.append(piece)
        if in_link:
            linked.append(piece)
    return "".join(parts), " ".join(linked)


def _role_text(role: str, content: str) -> str:
    """What a reader sees of a MyST role: the title of `title <target>` (a code role's in
    backticks, {meth}`__getstate__ <object.__getstate__>` reads `__getstate__`), a PEP or RFC
    by its name ({pep}`649` reads PEP 649), a text role's words without backticks."""
    name = role.split(":")[-1]
    text = re.sub(r"\s*<[^<>]*>$", "", content).strip() or content.strip()
    if name in _NUMBERED_ROLES:
        return f"{_NUMBERED_ROLES[name]} {text}"
    return text if name in _TEXT_ROLES else f"`{text.lstrip('~!')}`"


def _table(tokens: list[Token], start: int) -> tuple[list[Block], int]:
    """The table opening at `start`: its body rows as prose, and where it ends."""
    rows: list[list[tuple[str, str]]] = []
    i, in_body = start + 1, False
    while i < len(tokens) and tokens[i].type != "table_close":
        kind = tokens[i].type
        if kind == "tbody_open":
            in_body = True
        elif kind == "tr_open" and in_body:
            rows.append([])
        elif kind == "inline" and in_body and rows:
            rows[-1].append(inline_text(tokens[i]))
        i += 1
    return table_rows(rows), i


def markdown_blocks(text: str) -> list[Block]:
    """The blocks of a Markdown document, in order (see the module's docstring for what goes)."""
    # Jekyll/Hugo/MkDocs metadata
    text = _FRONT_MATTER.sub("", text.replace("\r\n", "\n").lstrip("\ufeff"), count=1)
    tokens = _PARSER.parse(unindent_containers(open_colon_fences(text)))
    blocks: list[Block | None] = []
    lists: list[list[int]] = []  # the open lists' next numbers (0: a bullet list), innermost last
    i = 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            blocks.append(heading(inline_text(tokens[i + 1])[0], int(token.tag[1:])))
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([int(token.attrs.get("start") or 1) if kind == "ordered_list_open" else 0])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "inline":  # a paragraph's (a list item's first paragraph starts with its marker)
            shown, linked = inline_text(token)
            in_item = bool(lists) and i >= 2 and tokens[i - 2].type == "list_item_open"
            if in_item:
                number = lists[-1][0]
                lists[-1][0] += 1 if number else 0
                blocks.append(prose("item", f"{number}. {shown}" if number else f"- {shown}", linked))
            else:
                blocks.append(prose("item" if lists else "paragraph", shown, linked))
        elif kind == "fence" and token.info.strip().startswith("{"):
            blocks += _myst_directive(token.info.strip(), token.content)
        elif kind in ("fence", "code_block"):
            blocks.append(_code_token(token))
        elif kind == "html_block":
            blocks += html_blocks(token.content, fragment=True)
        elif kind == "table_open":
            rows, i = _table(tokens, i)
            blocks += rows
        i += 1
    return keep_code_when_subject(blocks)


def _myst_directive(info: str, content: str) -> list[Block | None]:
    """A MyST directive fence (```{name} args): its prose, its code, or nothing."""
    name, _, args = info[1:].partition("}")
    name = name.strip().lower()
    body = re.sub(r"\A(?:[ \t]*:[\w-]+:.*\n)+", "", content)  # its `:option: value` lines
    if name in _PROSE_DIRECTIVES:
        return list(markdown_blocks(body))
    if name == "eval-rst":
        return list(rst_blocks(body))
    if name in _CODE_DIRECTIVES:
        return [code(body, args.strip())]
    return []  # toctree, contents, image, figure, include, mermaid, ...: no text


def _code_token(token: Token) -> Block | None:
    info, content = token.info.strip(), token.content
    if token.type == "code_block":  # indented: a fence inside it (an unknown container) is still code
        lines = content.strip("\n").splitlines()
        if lines and _FENCE.match(lines[0]):
            info = _FENCE.sub("", lines[0]).strip()
            content = "\n".join(line for line in lines[1:] if not _FENCE.match(line))
    return code(content, info)
