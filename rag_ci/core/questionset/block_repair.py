"""What a reviewer rejects on sight in a reference, dropped or repaired in the blocks before
any passage is cut (rag_ci.core.questionset.doc_blocks.keep_code_when_subject calls it for
every format):

- a lead-in whose example is gone: a paragraph or item ending with ":", "..." or "…" that
  no kept code block (or, for ":", no list) follows loses that last sentence ("For example,
  the following configuration..." before a dropped code block, or a snippet include);
- a sentence without its subject: a list item's explanation that the source put on its own
  line or paragraph ("`--verbose`" then "Will send debug level output ...") is joined to its
  term ("`--verbose` will send ..."), "`--jobs N`: Sets the number ..." reads "`--jobs N`
  sets the number ..."; one that cannot be joined ("Will send ..." alone) goes;
- a pointer: "See issue #409 for more on this issue.", "For an overview of X, see Y.";
- a line that stands as a heading ("**Middleware order**", a short line with no sentence
  end) becomes a heading.

Pure: blocks in, blocks out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from rag_ci.core.questionset.blocks import Block

_SENTENCES = re.compile(r"(?<=[.!?…])(\s+)(?=[A-Z0-9\"'(`])")
_MARKER = re.compile(r"^(?:- |\d+\. )")
_LEAD_IN = re.compile(r"(?::|\.\.\.|…)$")
_EMOJI_END = re.compile(r"(?:^|\s):[\w+-]+:$")  # ":tada:" ends a sentence, it introduces nothing
# A pointer elsewhere, not a fact: "See issue #409 ...", "See ... for more", "For an overview of X, see Y."
# ("See the usage guide for the options" says where the options are: kept.)
_POINTER = re.compile(
    r"^(?:see|refer to|read more|check out)\b.*(?:\b(?:issue|pull request|PR|discussion)s?\b|#\d+|"
    r"\bfor (?:more|further|details|information)\b)|"
    r"^for (?:an? |the )?(?:overview|more|further|details|full|complete|background)\b.*,\s*see\b",
    re.I,
)
_AUXILIARIES = frozenset(
    [
        "will",
        "can",
        "should",
        "is",
        "are",
        "was",
        "were",
        "must",
        "may",
        "would",
        "could",
        "does",
        "has",
        "have",
    ]
)
# Verbs a reference's explanation starts with when its subject (the option, the setting) was left behind.
_VERBS = frozenset(
    [
        "set",
        "remove",
        "enable",
        "disable",
        "return",
        "send",
        "print",
        "add",
        "control",
        "define",
        "specify",
        "allow",
        "make",
        "run",
        "start",
        "stop",
        "show",
        "use",
        "take",
        "give",
        "keep",
        "write",
        "read",
        "create",
        "delete",
        "update",
        "skip",
        "turn",
        "change",
        "limit",
        "force",
        "select",
        "load",
        "save",
        "list",
        "display",
        "include",
        "exclude",
        "ignore",
        "override",
        "configure",
        "accept",
        "require",
        "wait",
        "retry",
        "upload",
        "download",
        "sync",
        "copy",
        "move",
        "open",
        "close",
        "connect",
        "bind",
        "listen",
        "serve",
        "log",
        "point",
        "mark",
        "emit",
        "raise",
        "trigger",
        "apply",
        "check",
        "compare",
        "match",
        "store",
        "hold",
        "pass",
        "fetch",
        "cache",
        "reload",
        "restart",
        "determine",
        "indicate",
        "contain",
        "enforce",
    ]
)
_LABELLED = re.compile(
    r"^(?P<label>`[^`]+`(?:\s+[A-Za-z0-9_<>\[\]-]+)?|[\w.-]+(?:\s[\w.-]+){0,2}):?\s+(?P<verb>[A-Z][a-z]+)\b"
)
_HEADING_END = re.compile(r"[.!?:;,…)\]\"'`]$")
MAX_HEADING_WORDS = 8


def subjectless(word: str) -> bool:
    """Whether a capitalised first word is a verb waiting for its subject ("Will", "Sets")."""
    if not (word[:1].isupper() and word[1:].islower()):  # "CAN bus", "IS-2": a name, not a verb
        return False
    lower = word.lower()
    if lower in _AUXILIARIES:
        return True
    base = lower[:-2] if lower.endswith(("ses", "shes", "ches", "xes")) else lower[:-1]
    return lower.endswith("s") and base in _VERBS


def sentences(text: str) -> list[tuple[str, str]]:
    """(the space before it, the sentence) for each sentence, so that joining them back gives the text."""
    parts = _SENTENCES.split(text)
    return [("" if i == 0 else parts[i - 1], parts[i]) for i in range(0, len(parts), 2) if parts[i]]


def _joined(kept: list[tuple[str, str]]) -> str:
    return "".join((space if i else "") + sentence for i, (space, sentence) in enumerate(kept))


def repair_blocks(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with the defects above dropped or repaired (see the module's docstring)."""
    joined = _join_subjectless(list(blocks))
    out: list[Block] = []
    level = 1
    for block in joined:
        if block.kind == "heading":
            level = block.level
        elif block.kind == "paragraph" and _stands_as_heading(block.text):
            out.append(Block("heading", block.text, level=min(level + 1, 6)))
            continue
        elif block.kind in ("paragraph", "item"):
            fixed = _clean_prose(block)
            if fixed is None:
                continue
            block = fixed
        out.append(block)
    return _drop_orphan_lead_ins(out)


def _join_subjectless(blocks: list[Block]) -> list[Block]:
    """An item that is only a term, followed by its explanation starting with a verb: one item."""
    out: list[Block] = []
    for block in blocks:
        previous = out[-1] if out else None
        first = block.text.split(maxsplit=1)[0] if block.text.split() else ""
        if (
            previous is not None
            and previous.kind == "item"
            and block.kind in ("item", "paragraph")
            and not _MARKER.match(block.text)
            and subjectless(first)
            and _is_term(previous.text)
        ):
            out[-1] = replace(previous, text=f"{previous.text} {first.lower()}{block.text[len(first) :]}")
            continue
        out.append(block)
    return out


def _is_term(text: str) -> bool:
    body = _MARKER.sub("", text).strip()
    return (0 < len(body.split()) <= 4 and not _HEADING_END.search(body.rstrip("`"))) or bool(
        re.fullmatch(r"`[^`]+`:?", body)
    )


def _stands_as_heading(text: str) -> bool:
    return (
        "\n" not in text
        and len(text.split()) <= MAX_HEADING_WORDS
        and text[:1].isupper()
        and not _HEADING_END.search(text)
        and "`" not in text
    )


def _clean_prose(block: Block) -> Block | None:
    """The block without pointers and subjectless sentences; a labelled one repaired."""
    marker = _MARKER.match(block.text)
    head = marker.group(0) if marker else ""
    body = block.text[len(head) :]
    labelled = _LABELLED.match(body)
    if labelled and subjectless(labelled.group("verb")):
        verb = labelled.group("verb")
        body = f"{labelled.group('label')} {verb.lower()}{body[labelled.end() :]}"
    kept = [
        (space, s)
        for space, s in sentences(body)
        if not _POINTER.search(s) and not (subjectless(s.split(maxsplit=1)[0]) and not s.endswith("?"))
    ]
    if not kept:
        return None
    return replace(block, text=head + _joined(kept))


def _drop_orphan_lead_ins(blocks: list[Block]) -> list[Block]:
    """A lead-in (":", "...", "…") whose example is not the next block loses its last sentence."""
    out: list[Block] = []
    for i, block in enumerate(blocks):
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        text = block.text.rstrip()
        if block.kind in ("paragraph", "item") and _LEAD_IN.search(text) and not _EMOJI_END.search(text):
            introduces = following is not None and (
                following.kind == "code" or (block.text.rstrip().endswith(":") and following.kind == "item")
            )
            if not introduces:
                marker = _MARKER.match(block.text)
                head = marker.group(0) if marker else ""
                rest = sentences(block.text[len(head) :])[:-1]
                if not rest:
                    continue
                block = replace(block, text=head + _joined(rest))
        out.append(block)
    return out
