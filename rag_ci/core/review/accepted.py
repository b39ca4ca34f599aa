"""Accepted regressions (docs/accepted.md): a reviewed file that lets named regressions pass.

    accepted:
      - id: refund-window
        question_hash: "3f2a9c0d1e7b"   # the question as accepted (12+ characters); an edit lapses the entry
        metric: faithfulness            # optional: only this metric's drop is accepted
        reason: "The new policy text replaced the 30-day window on purpose (PR #412)."

Unlike the rest of the gate policy (taken from the baseline), this file is read from the
pull request on purpose: its diff is what reviewers approve, and the report lists every
acceptance at the top of the comment. A routing leak is never accepted. Pure: text in,
entries out; a comparison and entries in, a comparison out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from rag_ci.core.base.yamlsrc import line_of, load_yaml
from rag_ci.core.comparison.acceptance import AcceptedChange, StaleAcceptance
from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.results import RunResult
from rag_ci.errors import ValidationError

# The shortest question_hash prefix an entry may give (the docs show 12 characters; the
# report prints the whole hash): long enough that no two questions of a set share it.
MIN_HASH_PREFIX = 12


@dataclass(frozen=True)
class Acceptance:
    id: str
    question_hash: str
    reason: str
    metric: str | None = None
    line: int | None = None
    file: str | None = None  # the accepted file, as the report names it

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file and self.line else self.file or "the accepted file"

    def names(self, question_hash: str | None) -> bool:
        """Whether this entry names the question with `question_hash` (whole, or a prefix of 12+ characters)."""
        mine, theirs = self.question_hash.strip().lower(), (question_hash or "").lower()
        return bool(theirs) and (mine == theirs or (len(mine) >= MIN_HASH_PREFIX and theirs.startswith(mine)))


def parse_accepted(text: str, filename: str) -> tuple[Acceptance, ...]:
    """The entries of an accepted file; a clear error naming file and line otherwise."""
    root = load_yaml(text, filename)
    if root is None:
        return ()
    items = root.get("accepted") if isinstance(root, dict) else root
    if items is None:
        return ()
    if not isinstance(items, list):
        raise ValidationError(
            [
                f"{filename}:{line_of(root) or 1}: `accepted` must be a list of {{id, question_hash, reason, metric}}"
            ]
        )
    entries, problems = [], []
    for index, item in enumerate(items):
        line = line_of(items, index)
        where = f"{filename}:{line}" if line else filename
        if not isinstance(item, dict):
            problems.append(f"{where}: an entry must be a mapping with id, question_hash and reason")
            continue
        unknown = sorted(set(map(str, item)) - {"id", "question_hash", "reason", "metric"})
        missing = [k for k in ("id", "reason") if not str(item.get(k) or "").strip()]
        if item.get("question_hash") is None or not _as_written(item, "question_hash", text):
            missing.insert(1, "question_hash")
        if unknown:
            problems.append(
                f"{where}: unknown key(s) {', '.join(unknown)} (allowed: id, question_hash, reason, metric)"
            )
        if missing:
            problems.append(
                f"{where}: missing {', '.join(missing)}"
                + (
                    " (the question_hash of each regression is in the HTML report and comparison.json)"
                    if "question_hash" in missing
                    else ""
                )
            )
        if unknown or missing:
            continue
        question_hash = _as_written(item, "question_hash", text)
        if _cut_by_comment(item, "reason", text):
            problems.append(
                f"{filename}:{line_of(item, 'reason') or line}: the reason is cut at ' #' (YAML reads the rest as a "
                'comment): quote it, e.g. reason: "… (#231)"'
            )
            continue
        metric = item.get("metric")
        entries.append(
            Acceptance(
                id=str(item["id"]),
                question_hash=question_hash,
                reason=" ".join(str(item["reason"]).split()),
                metric=str(metric) if metric not in (None, "") else None,
                line=line,
                file=filename,
            )
        )
    if problems:
        raise ValidationError(problems)
    return tuple(entries)


def _as_written(item: Any, key: str, text: str) -> str:
    """The scalar as typed: an unquoted all-digit hash is a number to YAML (`0012…` loses its
    zeros, `1234e567…` is infinity), so a non-string is read back from the file's text."""
    value = item.get(key)
    if isinstance(value, str) or value is None:
        return str(value or "").strip()
    written = _source_text(item, key, text)
    token = re.match(r"[^\s,#\]}'\"]+", written or "")
    return token.group() if token else str(value)


def _source_text(item: Any, key: str, text: str) -> str | None:
    """The file's text from where `item[key]`'s value starts to the end of that line."""
    try:
        row, column = item.lc.value(key)
        return str(text.splitlines()[row][column:])
    except (AttributeError, IndexError, KeyError, TypeError):
        return None


def _cut_by_comment(item: Any, key: str, text: str) -> bool:
    """A plain (unquoted) scalar followed by ` #…` on its own line: YAML dropped the rest as a comment."""
    written = _source_text(item, key, text)
    if not written or written[0] in "'\"|>":
        return False
    return bool(re.search(r"\s#", written))


def apply_accepted(
    comparison: Comparison,
    entries: tuple[Acceptance, ...],
    question_hashes: Mapping[str, str],
    *,
    baseline_hashes: Mapping[str, str] | None = None,
) -> Comparison:
    """Move the regressions and worse questions the entries accept out of the gate, into
    `accepted`; entries that accept nothing become `stale_accepted`.

    An entry applies while the question's hash is the one it names (`Acceptance.names`). With `metric`, it
    covers that metric's drop only: a question is accepted when every metric that crossed
    down is covered (or an entry for it names no metric). Routing leaks are never accepted.
    """
    if not entries:
        return comparison
    by_id: dict[str, list[Acceptance]] = {}
    for entry in entries:
        by_id.setdefault(entry.id, []).append(entry)
    used: set[Acceptance] = set()
    accepted: list[AcceptedChange] = []
    regressions = _accept(comparison.regressions, by_id, question_hashes, used, accepted)
    worse = _accept(comparison.worse, by_id, question_hashes, used, accepted)
    stale = [
        _stale(entry, question_hashes, baseline_hashes or {}, comparison, regressions + worse)
        for entry in entries
        if entry not in used
    ]
    return replace(
        comparison,
        regressions=regressions,
        worse=worse,
        accepted=tuple(accepted),
        stale_accepted=tuple(stale),
    )


def _accept(
    changes: tuple[QuestionChange, ...],
    by_id: Mapping[str, list[Acceptance]],
    question_hashes: Mapping[str, str],
    used: set[Acceptance],
    accepted: list[AcceptedChange],
) -> tuple[QuestionChange, ...]:
    """The changes no entry accepts; the accepted ones go to `accepted`, their entries to `used`."""
    kept = []
    for change in changes:
        current = question_hashes.get(change.id)
        candidates = [e for e in by_id.get(change.id, []) if e.names(current)]
        crossed = tuple(m.name for m in change.metrics if m.crossed_down)
        whole = [e for e in candidates if e.metric is None]
        covering = [e for e in candidates if e.metric is not None and e.metric in crossed]
        if change.new_verdict == "routing_error" or not candidates:
            kept.append(change)
        elif whole or (crossed and {e.metric for e in covering} >= set(crossed)):
            chosen = whole + covering
            used.update(chosen)
            accepted.append(
                AcceptedChange(
                    change,
                    tuple(dict.fromkeys(e.reason for e in chosen)),
                    crossed,
                    tuple(dict.fromkeys(e.where for e in chosen)),
                )
            )
        else:
            kept.append(change)
    return tuple(kept)


def _stale(
    entry: Acceptance,
    question_hashes: Mapping[str, str],
    baseline_hashes: Mapping[str, str],
    comparison: Comparison,
    still_gating: tuple[QuestionChange, ...],
) -> StaleAcceptance:
    """An entry that accepted nothing, and why (`still_gating`: the regressions and worse questions
    left once the entries were applied)."""
    current = question_hashes.get(entry.id)
    insufficient = False
    if current is None:
        why = "no question with this id in the question set"
    elif not entry.names(current):
        before = baseline_hashes.get(entry.id)
        if before and before != current and entry.names(before):
            why = f"the question changed since it was accepted (question_hash {entry.question_hash}, now {current})"
        else:
            why = (
                f"its question_hash {entry.question_hash} is not this question's ({current}): mistyped, "
                "or copied from another question?"
            )
    elif any(c.id == entry.id and c.new_verdict == "routing_error" for c in comparison.gating):
        why = "a routing leak is never accepted"  # no entry can cover it: remove it
    elif any(c.id == entry.id for c in still_gating):
        why = (
            f"the question regressed on other metrics than {entry.metric}" if entry.metric else "not accepted"
        )
        insufficient = True
    else:
        why = "it did not regress in this run"
    return StaleAcceptance(entry.id, entry.metric, entry.reason, why, entry.where, insufficient)


def in_force(entries: tuple[Acceptance, ...], question_hashes: Mapping[str, str]) -> list[dict[str, Any]]:
    """The entries that still apply to this question set, for the history line."""
    return [
        {"id": e.id, "metric": e.metric, "reason": e.reason}
        for e in entries
        if e.names(question_hashes.get(e.id))
    ]


def question_hashes(run: RunResult) -> dict[str, str]:
    """Each question's hash by its id: what an entry's question_hash is held against."""
    return {q.id: q.question_hash for q in run.questions}


def baseline_hashes(baseline: RunResult, comparison: Comparison) -> dict[str, str]:
    """The baseline's question hashes, under the ids of this run (renamed questions follow)."""
    hashes = question_hashes(baseline)
    for new, old in comparison.renamed:  # one baseline question may be re-added under several ids
        hashes[new] = hashes.get(old, "")
    for _, old in comparison.renamed:
        hashes.pop(old, None)
    return hashes
