"""What the judge's votes disagreed on, so a person can decide a split (docs/noise.md, "Judge noise").

A multi-verdict metric's vote is a list of verdicts, one per extracted item (faithfulness: a
verdict per claim; answer relevancy: per statement; contextual recall: per sentence of the
reference). Every re-judgement replays the same extraction, so the verdict lists line up: the
first item whose verdict differs between votes is what the votes split on. A GEval metric has
one verdict: its reason is the nearest thing to a claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rag_ci.core.results import MetricResult
from rag_ci.judges.replies import EXTRACTION_STEPS, CallLog


class Measurement(Protocol):
    """One vote: what `rag_ci.judges.confirmation.Measurement` holds (that module imports this one)."""

    @property
    def result(self) -> MetricResult: ...

    @property
    def log(self) -> CallLog: ...


_ITEMS = ("claims", "statements", "truths")
_LIMIT = 200


def split_on(runs: Sequence[Measurement]) -> str | None:
    """The claim (or statement) whose verdict differed between `runs`, else a failing vote's reason."""
    verdicts = [v for v in (_verdicts(r) for r in runs) if v is not None]
    if len(verdicts) == len(runs) and len({len(v) for v in verdicts}) == 1:
        for i, column in enumerate(zip(*verdicts)):
            if len({str(row.get("verdict", "")).strip().lower() for row in column}) > 1:
                item = _item(runs[0], i, len(verdicts[0]))
                dissent = next((row.get("reason") for row in column if row.get("reason")), None)
                return _short(item or dissent)
        return None
    reasons = [r.result.reason for r in runs if r.result.passed is False and r.result.reason]
    return _short(reasons[0]) if reasons else None


def _verdicts(run: Measurement) -> list[dict[str, Any]] | None:
    """The verdict step's list of verdicts in this vote, when it has one."""
    log = run.log
    for key, data in log.replies.items():
        if log.steps.get(key) in EXTRACTION_STEPS or not isinstance(data, dict):
            continue
        found = data.get("verdicts")
        if isinstance(found, list) and all(isinstance(v, dict) for v in found):
            return found
    return None


def _item(run: Measurement, index: int, count: int) -> str | None:
    """The extracted item the index-th verdict is about (the extraction's list of the same length)."""
    for data in run.log.extraction().values():
        if not isinstance(data, dict):
            continue
        for name in _ITEMS:
            items = data.get(name)
            if isinstance(items, list) and len(items) == count:
                return str(items[index])
    return None


def _short(text: str | None) -> str | None:
    if not text:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1].rstrip() + "…"
