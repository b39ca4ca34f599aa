"""What a writer wrote that no reviewer should see: checked before a draft is kept.

- `reference_problem`: a reference must read as sentences of its passage's prose: no markup
  (HTML tags, images or badges, Markdown links, code fence lines, table rows, headings,
  MkDocs/reST directives), ending as a sentence ends, not starting mid-sentence, not a bare
  heading; and when it is the passage's own words, whole sentences of it, never a piece cut
  out of one ("in the lifespan task, it will not be available..."); no template syntax; and it
  must stand on its own (.reference_standalone: no lead-in, no pointer, no "this" named elsewhere).
- `echo_problem`: a question or reference that echoes the writer's prompt (its labels:
  "Scenario:", "Task:", "Input Format:"...), carries its instructions ("I want you to act
  as", "in JSON format"), a placeholder (`{input}`, `[insert topic]`), or quotes the
  prompt templates it was written from (five words in a row of them).

Each returns the reason a draft is dropped (its kind first: `generate`'s summary counts
the drafts dropped by kind), or None.

Pure: strings in, a reason out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rag_ci.core.questionset.draft_text import normalise
from rag_ci.core.questionset.reference_standalone import standalone_problem
from rag_ci.core.questionset.template_syntax import ANY_TEMPLATE_SYNTAX

QUOTE_WORDS = 5  # this many words in a row of the writer's template is a quote of it

# MDX: comments (`{/* truncate */}`), ESM lines (`import Tabs from '@theme/Tabs';`); Docusaurus and
# MyST colon fences (`:::tip`, `:::{note}`); MyST roles ({func}`x`, as `code` outside code) and targets (`(label)=`).
MDX_OR_MYST = re.compile(
    r"\{/\*|\*/\}|^\s*(?:import|export)\s+(?:[\w{*]|default\b)|^\s*:::|\{[A-Za-z][\w:.+-]*\}`|"
    r"^\s*\([\w.:-]+\)=\s*$",
    re.M,
)
_MARKUP = (
    ("an HTML tag", re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|&(?:nbsp|amp|lt|gt|quot|#\d+);")),
    ("an image or badge", re.compile(r"!\[[^\]]*\]\(|\[!\[|shields\.io|badge\.svg")),
    ("a Markdown link", re.compile(r"\[[^\]]+\]\([^)\s]*\)|^\s*\[[^\]]+\]:\s*\S", re.M)),
    ("a code fence", re.compile(r"^\s*(?:```|~~~)", re.M)),
    ("a table row", re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}", re.M)),
    ("a heading", re.compile(r"^\s{0,3}#{1,6}\s", re.M)),
    ("a directive", re.compile(r"^\s*(?:!!!|\?\?\?|===\s+\")|^\s*\.\.\s+[\w-]+::", re.M)),
    ("MDX or MyST syntax", MDX_OR_MYST),
    ("template syntax", ANY_TEMPLATE_SYNTAX),  # Hugo shortcodes, Jinja/Liquid tags and expressions
)
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")
_MID_SENTENCE = re.compile(r"^(?:[a-z]|(?:and|or|but|so|which|that|then)\b|[,;)\]]|-\s)")
# The prompts' own labels at the start of a line: one of the distinctive ones is an echo; the
# generic ones ("Input:", "Context:") also start lines of documentation, so it takes two of them.
_LABELS = re.compile(
    r"^\s*(?:scenario|task|input format|evolved input|rewritten input|original query|example (?:input|json|"
    r"context|query|feedback)|json|generated response|expected output|max goldens per context)\s*:",
    re.I | re.M,
)
_GENERIC_LABELS = re.compile(r"^\s*(input|context|query|feedback)\s*:", re.I | re.M)
_INLINE_LABELS = re.compile(
    r"\b(?:Scenario|Input Format|Evolved Input|Rewritten Input|Generated Response|Expected Output|"
    r"Max Goldens Per Context|Example JSON)\s*:|\bTask\s*:\s*[\"']|[\"'](?:input|data|rewritten_input|"
    r"response|feedback|used_source_files)[\"']\s*:"
)
# Phrases of a prompt, not of documentation ("must be" is both: only the prompt's capitals count).
_INSTRUCTIONS = re.compile(
    r"(?i:\bI want you (?:to )?act as\b|\byou are an? (?:AI|copywriter|query rewriter|input rewriter)\b|"
    r"\bas an AI(?: language model)?\b|\bhere is (?:the|a|your) (?:rewritten|generated|revised|new) (?:input|query|question)\b|"
    r"^\s*sure[,!]\s|\b(?:the|this) (?:given|provided) (?:context|scenario|input format|task)\b|\bthe context provided\b|"
    r"\bwith the '\w+' key\b)|"
    r"\b(?:MUST|SHOULD) (?:TRY to|strictly adhere|be (?:a STRING|relevant to|framed)|include at least|NOT incorporate|"
    r"meaningfully combine|come from)\b",
    re.M,
)
_PLACEHOLDER = re.compile(
    r"\{\{?\s*[\w.]+\s*\}\}?|\[(?:insert|your|enter|placeholder|topic|product|question|answer)\b[^\]]*\]|"
    r"<(?:insert|your|enter|placeholder|topic|product|question|answer)\b[^>]*>|\blorem ipsum\b|"
    r"\bXXX+\b",
    re.I,
)


def _outside_code(text: str) -> str:
    """The text without its `inline code` (a `--host <str>` in backticks is no HTML tag)."""
    return re.sub(r"`[^`\n]+`", "`code`", text)


def markup_in(text: str) -> str | None:
    """The kind of markup in the text, or None."""
    plain = _outside_code(text)
    return next((name for name, pattern in _MARKUP if pattern.search(plain)), None)


def _is_heading_of(text: str, passages: Sequence[str]) -> bool:
    return any(
        re.search(rf"^\s{{0,3}}#{{1,6}}\s+{re.escape(text.rstrip('.:'))}\s*$", p, re.M | re.I)
        for p in passages
    )


def _cut_from(reference: str, passage: str) -> bool:
    """The reference is the passage's own words but starts inside one of its sentences (a cut
    capitalised by the writer is still a cut: compared without case)."""
    text, reference = re.sub(r"[ \t]+", " ", passage).lower(), reference.lower()
    start, found = text.find(reference), False
    while start != -1:
        found, before = True, text[:start]
        if (
            not before.strip()
            or before.rstrip(" ").endswith(("\n", ".", "!", "?", ":", '"', "”", ")"))
            or re.search(r"(?:^|\n)\s*(?:[-*]|\d+[.)])\s$", before) is not None
        ):
            return False  # it starts where a sentence (or a list item) starts
        start = text.find(reference, start + 1)
    return found


def reference_problem(reference: str, passages: Sequence[str]) -> str | None:
    """Why this reference is no sentence of its passages (see the module), or None."""
    text = " ".join(reference.split())
    markup = markup_in(reference)
    if markup:
        return f"markup in the reference ({markup})"
    if _is_heading_of(text, passages):
        return "the reference is not a sentence (a heading of its passage)"
    if not _SENTENCE_END.search(text):
        return "the reference is not a sentence (it does not end as one)"
    if _MID_SENTENCE.match(text):
        return "the reference is not a sentence (it starts mid-sentence)"
    if len(text.split()) < 3:
        return "the reference is not a sentence (fewer than three words)"
    if any(_cut_from(text, p) for p in passages):
        return "the reference is a fragment of its passage (a sentence cut at its start)"
    return standalone_problem(text)


def _shingles(text: str, n: int) -> set[tuple[str, ...]]:
    words = normalise(text).split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def template_shingles(templates: Iterable[str], n: int = QUOTE_WORDS) -> frozenset[tuple[str, ...]]:
    """The runs of n words of the writer's prompt templates (what a quote of them shares)."""
    out: set[tuple[str, ...]] = set()
    for template in templates:
        out |= _shingles(template, n)
    return frozenset(out)


def echo_problem(
    text: str, quoted: frozenset[tuple[str, ...]] = frozenset(), n: int = QUOTE_WORDS
) -> str | None:
    """Why this question or reference is the writer's prompt rather than a draft, or None;
    `quoted`: template_shingles of the prompts it was written from."""
    plain = _outside_code(text)  # `GET /items/{id}` is documentation, not a placeholder
    generic = {m.lower() for m in _GENERIC_LABELS.findall(plain)}
    if len(generic) >= 2:
        return f"echoes the writer's prompt ({', '.join(sorted(g.capitalize() + ':' for g in generic))})"
    for pattern, reason in (
        (_LABELS, "echoes the writer's prompt"),
        (_INLINE_LABELS, "echoes the writer's prompt"),
        (_INSTRUCTIONS, "holds the writer's instructions"),
        (_PLACEHOLDER, "holds a placeholder"),
    ):
        found = pattern.search(plain)
        if found:
            return f"{reason} ({found.group().strip()!r})"
    shared = sorted(_shingles(text, n) & quoted)
    if shared:
        return f"quotes the writer's template ({' '.join(shared[0])!r})"
    return None
