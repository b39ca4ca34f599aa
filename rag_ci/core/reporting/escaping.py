"""Untrusted text made inert where it is printed: one escaping filter per output format.

Every string the report prints is untrusted (answers, reasons quoting them, ids and tags from
the repository, model names and notices built from the pull request's rag-ci.yml or from the
baseline):

- markdown: `escape_md` (filter `u`), `escape_notice` (filter `quote`, a block quote that keeps
  rag-ci's own `code` spans), `markdown_url` (filter `url`, link targets rag-ci made), `fmt_ids`
  (filter `ids`); numbers go through rag_ci.core.reporting.number_formats. tests/unit/test_render.py
  walks the templates and fails on an expression printed without one of them.
- HTML: Jinja's autoescaping; data for a page's script goes through `script_json` (filter
  `jsonscript`), which no `</script>` in it can end.
"""

from __future__ import annotations

import json
import re
from typing import Any

from markupsafe import Markup

from rag_ci.core.base.text import INVISIBLE
from rag_ci.core.reporting import view
from rag_ci.core.reporting.template_functions import template_filter
from rag_ci.core.scoring.verdict import cut_at_word

# Brackets are escaped, so parentheses and `!` can never complete a link or an image.
_MD_SPECIALS = "\\`*_{}[]#+|~<>"

# Bidi and zero-width controls reorder or hide what the reader sees, C0/C1 controls are
# nothing to show: each is written as a visible `<U+202E>` (in inline code: `\u202e`).
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f" + INVISIBLE.pattern[1:-1] + "]")

# What GitHub turns into a link by itself (GFM's extended autolinks).
_BARE_URL = re.compile(r"(?i)(?:(?:https?|ftp)://|www\.)\S+")


def code_span(text: str, *, in_table: bool = True) -> str:
    """`text` as inline code: shown as typed, never a link, a mention or markup. The fence is
    longer than any backtick run inside; in a table cell `|` would still end the cell."""
    text = _UNSEEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def _escape_inline(text: str, *, in_table: bool = True) -> str:
    out: list[str] = []
    position = 0
    for url in _BARE_URL.finditer(text):
        out.append(_escape_chars(text[position : url.start()]))
        out.append(code_span(url.group(), in_table=in_table))
        position = url.end()
    out.append(_escape_chars(text[position:]))
    return "".join(out)


@template_filter("u")
def escape_md(text: Any, limit: int = 200) -> str:
    """Untrusted text made inert for a GitHub markdown table cell.

    One line, HTML-escaped, markdown punctuation backslashed, `@` written as an
    entity so nobody gets mentioned, bare URLs as inline code so they are not
    links, cut at `limit` characters.
    """
    if text is None:
        return ""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = cut_at_word(flat, limit)  # never inside an id or a URL (cut short, a link to elsewhere)
    return _escape_inline(flat)


@template_filter("ucode")
def escape_md_keeping_code(text: Any, limit: int = 200) -> str:
    """`escape_md`, except that the text's `code` spans stay code (a headline quoting a cause
    such as "target.entry `app:answer`": GitHub shows the name as code, not "\\`app:answer\\`" in
    the places that print a headline as typed). A span's text is only ever code: inert."""
    if text is None:
        return ""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = cut_at_word(flat, limit)
    parts = re.split(r"`([^`]+)`", flat)  # odd parts: the text of a code span
    return "".join(code_span(p, in_table=False) if i % 2 else _escape_inline(p) for i, p in enumerate(parts))


@template_filter("quote")
def escape_notice(text: Any, limit: int = 2000) -> str:
    """A notice (several lines, built from config values, error messages and the baseline)
    for a `> ` block quote: each line escaped like `escape_md`, except that a `backticked`
    part stays inline code (inert by itself), so rag-ci's own notices keep their formatting."""
    if text is None:
        return ""
    lines = []
    for line in view.whole_lines(str(text), limit):
        parts = " ".join(line.split()).split("`")
        if len(parts) % 2 == 0:  # an unpaired backtick: the last one is plain text
            parts[-2:] = [parts[-2] + "`" + parts[-1]]
        rendered = [
            code_span(p, in_table=False) if i % 2 and p else _escape_inline(p, in_table=False)
            for i, p in enumerate(parts)
        ]
        if "".join(parts).strip():
            lines.append("".join(rendered))
    return "\n> ".join(lines)


@template_filter("url")
def markdown_url(url: Any) -> str:
    """A link target rag-ci built (run and artifact URLs): http(s) only, nothing that ends it."""
    text = str(url or "")
    if not re.match(r"(?i)https?://", text):
        return "#"
    return re.sub(r"[\s()<>\[\]`\\\"']", lambda m: f"%{ord(m.group()):02X}", text)


def _escape_chars(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        if char == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(char)  # inside a word (hit_at_k) an underscore never starts emphasis
        elif char == "&":
            out.append("&amp;")
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        elif char == "@":
            out.append("&#64;")
        elif char in _MD_SPECIALS:
            out.append("\\" + char)
        elif not char.isprintable() and _UNSEEN.match(char):
            out.append(f"&lt;U+{ord(char):04X}&gt;")
        else:
            out.append(char)
    return "".join(out)


@template_filter("ids")
def fmt_ids(ids: Any, limit: int = 60) -> str:
    """Question ids, each escaped like a table cell and cut at `limit`, comma-separated:
    the compact list that names every question when the rows about them must go."""
    return ", ".join(escape_md(i, limit) for i in ids)


@template_filter("jsonscript")
def script_json(data: Any) -> Markup:
    """JSON safe inside <script>: no `<`, `>` or `&` can close the element or open a comment;
    U+2028/2029 escaped for older JavaScript parsers."""
    text = json.dumps(data, ensure_ascii=False)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return Markup(text)
