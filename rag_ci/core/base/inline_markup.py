"""Text as a reader reads it, without its inline markup: what comparing the words of two chunks
compares. A documentation page writes values in code spans (`` `50000` ``), names in emphasis
(``**MAX_TOKENS**``) and pointers as links (``[the limits](limits.md)``); two versions of a
chunk are compared word by word, and a word is the same word with or without its markers
(issue 55: an edit of `` `50000` `` to `` `80` `` was told as a cut, since "`50000`" is not
"50000"). Markdown, reST and HTML inline markup; pure.
"""

from __future__ import annotations

import re

# Links, images and reST roles first: their text may be in backticks or hold emphasis.
_LINKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)"), r"\1"),  # ![alt](src)
    (re.compile(r"\[([^\]\n]+)\]\([^)\n]*\)"), r"\1"),  # [text](target)
    (re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]"), r"\1"),  # [text][ref]
    (re.compile(r"`([^`<\n]+?)\s*<[^>\n]+>`_{1,2}"), r"\1"),  # reST `text <target>`_
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),  # <https://…> autolinks
    (re.compile(r":[\w.+-]+(?::[\w.+-]+)?:`([^`\n]+)`"), r"\1"),  # reST :role:`text`
)
# Outside code spans only: a code span's text is literal (`__init__`, `*args`).
_MARKERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), ""),  # inline HTML tags
    (re.compile(r"(?<![\w*])(\*{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])"), r"\2"),  # *em*, **strong**
    (re.compile(r"(?<![\w])(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),  # _em_, __strong__
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),  # ~~strike~~
)

_CODE_SPAN = re.compile(r"(?P<ticks>`+)(?P<code>.+?)(?P=ticks)")


def without_inline_markup(text: str) -> str:
    """`text` with its inline markup removed and its words kept: "Set `timeout` to **80**, see
    [limits](limits.md)" → "Set timeout to 80, see limits". Identifiers keep their underscores
    (`max_tokens`, `__init__` in a code span), since only markers around a word are removed."""
    if not any(marker in text for marker in "`*_[<~:"):
        return text  # most chunks of plain prose: nothing to remove
    for pattern, replacement in _LINKS:
        text = pattern.sub(replacement, text)
    parts, end = [], 0
    for span in _CODE_SPAN.finditer(text):  # a code span's text stays as it is, without its backticks
        parts += [_unmarked(text[end : span.start()]), span.group("code").strip()]
        end = span.end()
    return "".join([*parts, _unmarked(text[end:])])


def _unmarked(text: str) -> str:
    for pattern, replacement in _MARKERS:
        text = pattern.sub(replacement, text)
    return text
