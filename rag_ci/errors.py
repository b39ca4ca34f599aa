"""Errors a user can act on. The CLI turns them into messages and exit code 2."""

from __future__ import annotations


class RagCiError(Exception):
    """A problem with the user's input or environment, explained in the message."""


class ValidationError(RagCiError):
    """Invalid question set or config; each problem names file, line and question id."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


class IncompatibleBaseline(RagCiError):
    """The baseline cannot be compared with this run (different judge, thresholds or schema)."""


class TargetError(Exception):
    """The target failed on one question: crash, time-out or malformed response."""


class BrokenRun(RagCiError):
    """A run whose error share exceeds gate.max_error_rate: not a result, never compared."""
