"""eval_history.jsonl as a face read it, for the gate (rag_ci.gate): known-flaky questions, trend, calibration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date as Date
from functools import cached_property
from typing import Any

from rag_ci.core.comparison.history import (
    known_flaky,
    marked_lines,
    read_history,
    trend_summary,
    without_unvouched_marks,
)
from rag_ci.core.results import RunResult
from rag_ci.core.review.calibration_status import CalibrationStatus, statuses_from_history


@dataclass(frozen=True)
class History:
    """eval_history.jsonl as a face read it: the known-flaky questions, the trend and the
    judge's calibration records all come from its text.

    `given`: a history was read at all (its `text` is None when it could not be); without one
    (the command line without `--history`) the report says nothing about calibration.

    A known-flaky mark makes a real regression "flaky, not gating", so a line that marks one
    counts only when it is among `vouched`, the lines rag-ci wrote on the default branch: the
    action asks GitHub who committed the lines of `marked` (docs/noise.md). `vouched` None
    (`--history FILE` on the command line: the user's own file): every line counts."""

    text: str | None = None
    given: bool = False
    vouched: frozenset[str] | None = None

    @classmethod
    def of_text(cls, text: str | None) -> History:
        return cls(text, given=True)

    def with_vouched(self, lines: set[str] | frozenset[str]) -> History:
        """This history, its marks counted only on the lines among `lines`."""
        return dataclasses.replace(self, vouched=frozenset(lines))

    @cached_property
    def _read(self) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
        return read_history(self.text) if self.text else ([], [])

    @property
    def records(self) -> list[tuple[str, dict[str, Any]]]:
        return self._read[0]

    @property
    def problems(self) -> list[str]:
        """Why lines were skipped ("line 3: not JSON"), for the faces to warn about; never fatal."""
        return self._read[1]

    @cached_property
    def entries(self) -> list[dict[str, Any]]:
        return [entry for _, entry in self.records]

    @cached_property
    def marked(self) -> set[str]:
        """The raw lines that mark questions known-flaky: the ones to vouch for."""
        return marked_lines(self.records) if self.entries else set()

    @cached_property
    def _flaky(self) -> tuple[dict[str, float] | None, int]:
        if not self.entries:
            return None, 0
        if self.vouched is None:
            return known_flaky(self.entries), 0
        vouched = set(self.vouched) & self.marked
        return known_flaky(without_unvouched_marks(self.records, vouched)), len(self.marked - vouched)

    def known_flaky(self) -> dict[str, float] | None:
        return self._flaky[0]

    @property
    def ignored_marks(self) -> int:
        """Lines marking questions flaky that rag-ci did not write (their marks were ignored)."""
        return self._flaky[1]

    def trend(self, last: int = 10) -> dict[str, Any] | None:
        return trend_summary(self.entries, last=last) if self.entries else None

    def calibration(self, head: RunResult, today: Date) -> tuple[CalibrationStatus, ...]:
        """The judge's human calibration (docs/judges.md), from the records in the history."""
        if head.meta.judge is None or not self.given:
            return ()
        return tuple(statuses_from_history(head, self.text, today))
