"""Annotations: a finding shown where the reviewer already looks, at a file and line of the
pull request's diff (the `- id:` line of a regressed question in questions.yml, the line of a
config error, a cited document that changed). Pure: the comparison, the questions' lines and
the documents' paths in; `Annotation`s out, most severe first.

The action prints the first few as workflow commands (GitHub shows 10 per step) and sends all
of them to a check run (rag_ci.action.annotations). Messages quote untrusted text (ids,
reasons): the workflow-command and REST layers escape it where they write it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.reporting.rows import metrics_cell, why_cell

Level = Literal["failure", "warning", "notice"]
_RANK = {"failure": 0, "warning": 1, "notice": 2}
MESSAGE_LIMIT = 600  # one line; the full row is in the job summary
TITLE_LIMIT = 200


@dataclass(frozen=True)
class Annotation:
    level: Level
    title: str
    message: str
    path: str | None = None  # relative to the repository root (GITHUB_WORKSPACE)
    line: int | None = None  # 1-based; None: the file as a whole

    @property
    def rank(self) -> int:
        return _RANK[self.level]


def by_severity(annotations: Sequence[Annotation]) -> list[Annotation]:
    """Failures, then warnings, then notices; stable within a level (the order they were found)."""
    return sorted(annotations, key=lambda a: a.rank)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def cause_line(change: QuestionChange, params: Mapping[str, Mapping[str, object]] | None = None) -> str:
    """'hit@5 1→0 — the chunk that held "10 ms" was cut (in mss60)': what failed, why, where."""
    what = metrics_cell(change, params)
    why = why_cell(change)
    corpora = ", ".join(change.corpora) or "no corpus"
    return _one_line(f"{what}" + (f" — {why}" if why else "") + f" (in {corpora})", MESSAGE_LIMIT)


def gating_kinds(cmp: Comparison) -> list[tuple[str, QuestionChange]]:
    """(kind, change) for every question that fails the gate: routing leaks first (they are
    never accepted), then regressions, then worse; each question once."""
    seen: set[str] = set()
    out: list[tuple[str, QuestionChange]] = []
    for kind, changes in (
        ("routing leak", cmp.leaking),
        ("regression", cmp.regressions),
        ("worse", cmp.worse),
    ):
        for change in changes:
            if change.id not in seen:
                seen.add(change.id)
                out.append((kind, change))
    return out


def comparison_annotations(
    cmp: Comparison,
    *,
    questions_path: str | None,
    lines: Mapping[str, int],
    documents: Mapping[str, str],
    params: Mapping[str, Mapping[str, object]] | None = None,
    level: Level = "failure",
    document_lines: Mapping[str, int] | None = None,
    comment_url: str | None = None,
) -> list[Annotation]:
    """One annotation per question that fails the gate, at its `- id:` line in questions.yml
    (`lines`), then one per cited document that changed (`documents`: source -> its path; at its
    first changed line when `document_lines` has it), noting which questions cite it. `level` is
    "warning" when the gate is off; `comment_url`, the PR comment, is named in each question's
    message (the row with the evidence and the entry to paste is there)."""
    row = f" Its row: {comment_url}" if comment_url else ""
    out = [
        Annotation(
            level,
            _one_line(f"{change.id} — {kind}", TITLE_LIMIT),
            _one_line(cause_line(change, params) + row, MESSAGE_LIMIT + len(row)),
            questions_path,
            lines.get(change.id),
        )
        for kind, change in gating_kinds(cmp)
    ]
    return out + changed_source_annotations(
        cmp,
        questions_path=questions_path,
        lines=lines,
        documents=documents,
        document_lines=document_lines or {},
    )


def changed_source_annotations(
    cmp: Comparison,
    *,
    questions_path: str | None,
    lines: Mapping[str, int],
    documents: Mapping[str, str],
    document_lines: Mapping[str, int] | None = None,
) -> list[Annotation]:
    """A cited document that changed since the baseline: at its first changed line (else at the
    document, else at the first question citing it), naming the questions that cite it and those
    of them that fail, accepted and already-failing ones included."""
    failing = {c.id for c in (*cmp.regressions, *cmp.worse, *cmp.leaks, *cmp.source_changed_failing)}
    citing: dict[str, list[str]] = {}
    accepted = tuple(a.change for a in cmp.accepted)
    for change in (
        *cmp.regressions,
        *cmp.worse,
        *cmp.leaks,
        *accepted,
        *cmp.source_changed_failing,
        *cmp.gains,
        *cmp.changed,
        *cmp.carried,
    ):
        for source in change.source_changed:
            if change.id not in citing.setdefault(source, []):
                citing[source].append(change.id)
    out = []
    for source, ids in citing.items():
        bad = [i for i in ids if i in failing]
        message = (
            f"{source} changed since the baseline; cited by {', '.join(ids[:10])}"
            + (f" (+{len(ids) - 10} more)" if len(ids) > 10 else "")
            + (f"; failing now: {', '.join(bad[:10])}" if bad else "")
            + ". The reference may be stale: update the reference or the document."
        )
        path = documents.get(source)
        line = (document_lines or {}).get(source) if path else lines.get(ids[0])
        out.append(
            Annotation(
                "warning",
                _one_line(f"{source} — source changed", TITLE_LIMIT),
                _one_line(message, MESSAGE_LIMIT),
                path or questions_path,
                line,
            )
        )
    return out


_AT_LINE = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+): (?P<message>.*)$", re.S)


def validation_annotations(
    problems: Sequence[str], relative: Callable[[str], str], title: str = "rag-ci: invalid input"
) -> list[Annotation]:
    """Each problem of a ValidationError ("file:line: message") at its file and line; one
    without a line ("file: message") at the file; anything else without a place."""
    out = []
    for problem in problems:
        match = _AT_LINE.match(problem)
        if match:
            out.append(
                Annotation(
                    "failure",
                    title,
                    _one_line(match["message"], MESSAGE_LIMIT),
                    relative(match["file"]),
                    int(match["line"]),
                )
            )
            continue
        head, sep, rest = problem.partition(": ")
        if sep and head.endswith((".yml", ".yaml", ".json")) and "\n" not in head:
            out.append(Annotation("failure", title, _one_line(rest, MESSAGE_LIMIT), relative(head)))
        else:
            out.append(Annotation("failure", title, _one_line(problem, MESSAGE_LIMIT)))
    return out
