"""Where each question of a questions.yml starts: id -> the 1-based line of its `id:` key.

Annotations point a regressed question at its line in the pull request's diff. A valid set
is read with the fast loader, which keeps no positions (rag_ci.core.questionset.questions),
so the lines come from a second read with the round-trip loader, only when something is to
be annotated. Pure: text in, lines out.
"""

from __future__ import annotations

import unicodedata

from rag_ci.core.base.yamlsrc import line_of, load_yaml
from rag_ci.errors import RagCiError


def question_lines(text: str, filename: str) -> dict[str, int]:
    """Question id (NFC, as the loader reads it) -> the line of its `id:`; {} when the file
    does not parse (the set was validated already: this only fails on a file changed since)."""
    try:
        root = load_yaml(text, filename)
    except RagCiError:
        return {}
    items = root.get("questions") if isinstance(root, dict) else None
    if not isinstance(items, list):
        return {}
    lines: dict[str, int] = {}
    for index, item in enumerate(items):
        qid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(qid, str):
            continue
        line = line_of(item, "id") or line_of(items, index)
        if line is not None:
            lines.setdefault(unicodedata.normalize("NFC", qid), line)
    return lines
