"""Two answers side by side, word by word: what the before/after section shows of an answer that changed."""

from __future__ import annotations

import difflib

from rag_ci.core.reporting.template_functions import template_global


@template_global
def word_diff(
    old: str | None, new: str | None, limit: int = 400
) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """The two answers as runs of words, (text, changed): words only in the baseline answer
    are changed on the old side, words only in this run's on the new side. Each side is cut
    to about `limit` characters. The text is untrusted: the caller escapes every run."""
    a, b = (old or "").split(), (new or "").split()
    old_runs: list[tuple[str, bool]] = []
    new_runs: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if i2 > i1:
            old_runs.append((" ".join(a[i1:i2]), tag != "equal"))
        if j2 > j1:
            new_runs.append((" ".join(b[j1:j2]), tag != "equal"))
    return _cut(old_runs, limit), _cut(new_runs, limit)


def _cut(runs: list[tuple[str, bool]], limit: int) -> list[tuple[str, bool]]:
    out, used = [], 0
    for text, changed in runs:
        if used + len(text) > limit:
            out.append((text[: max(0, limit - used)] + " …", changed))
            break
        out.append((text, changed))
        used += len(text) + 1
    return out
