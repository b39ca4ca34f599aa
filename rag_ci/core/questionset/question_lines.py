"""Where each question of a questions.yml starts: id -> the 1-based line of its `id:` key.

Annotations point a regressed question at its line in the pull request's diff. A valid set
is read with the fast loader, which keeps no positions (rag_ci.core.questionset.questions),
so the lines come from a second read with the round-trip loader, only when something is to
be annotated. Pure: text in, lines out.
"""

from __future__ import annotations

import unicodedata

from rag_ci.core.base.yamlsrc import line_of, load_yaml
from rag_ci.core.questionset.conversations import turn_id
from rag_ci.errors import RagCiError


def question_lines(text: str, filename: str) -> dict[str, int]:
    """Question id (NFC, as the loader reads it) -> the line of its `id:`; {} when the file
    does not parse (the set was validated already: this only fails on a file changed since)."""
    try:
        root = load_yaml(text, filename)
    except RagCiError:
        return {}
    if not isinstance(root, dict):
        return {}
    items = root.get("questions")
    lines: dict[str, int] = {}
    for index, item in enumerate(items if isinstance(items, list) else []):
        qid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(qid, str):
            continue
        line = line_of(item, "id") or line_of(items, index)
        if line is not None:
            lines.setdefault(unicodedata.normalize("NFC", qid), line)
    lines.update(turn_lines(root.get("conversations")))
    return lines


def turn_lines(conversations: object) -> dict[str, int]:
    """Each conversation turn's id (`CONV-7#2`) -> the line of its `user:` (docs/conversations.md)."""
    lines: dict[str, int] = {}
    for item in conversations if isinstance(conversations, list) else []:
        cid, turns = (item.get("id"), item.get("turns")) if isinstance(item, dict) else (None, None)
        if not isinstance(cid, str) or not isinstance(turns, list):
            continue
        for number, turn in enumerate(turns, 1):
            line = (line_of(turn, "user") if isinstance(turn, dict) else None) or line_of(turns, number - 1)
            if line is not None:
                lines.setdefault(unicodedata.normalize("NFC", turn_id(cid, number)), line)
    return lines
