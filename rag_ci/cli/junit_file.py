"""`rag-ci run --junit`: the JUnit XML report (rag_ci.core.reporting.junit) beside results.json."""

from __future__ import annotations

from pathlib import Path

from rag_ci.core.reporting.junit import JUNIT_FILE, render_junit
from rag_ci.files.atomic import write_text_atomic
from rag_ci.gate import GateOutcome, Verdict


def write_junit_beside(results: Path, outcome: GateOutcome) -> Path:
    """junit.xml in the folder of `results`: compared when the gate compared (a baseline of
    another kind is no comparison), else this run alone (its errors and routing leaks)."""
    comparison = None if outcome.verdict == Verdict.INCOMPATIBLE else outcome.comparison
    path = results.parent / JUNIT_FILE
    write_text_atomic(path, render_junit(outcome.head, comparison))
    return path
