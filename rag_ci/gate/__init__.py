"""The gate: a run evaluated against its baseline, written once for both faces (rag_ci.gate.decision).

Its parts: pinning (before the run), decision (after it), compared (the comparison's outcome),
outcome (the verdict, the exit code, the options). The faces import from here."""

from rag_ci.core.comparison.compare import REBASELINE_HINT, Comparison, QuestionChange
from rag_ci.core.review.accepted import Acceptance, baseline_hashes, question_hashes
from rag_ci.core.review.history_view import History
from rag_ci.gate.decision import accepted_in_force, broken_notice, compare_runs, decide
from rag_ci.gate.outcome import (
    BOOTSTRAP,
    EXIT_ERROR,
    EXIT_PASS,
    EXIT_REGRESSION,
    GATE_EXIT_CODES,
    GateOptions,
    GateOutcome,
    Uncompared,
    Verdict,
)
from rag_ci.gate.pinning import (
    FAKE_JUDGE,
    BaseConfig,
    PinnedProject,
    needs_base_config,
    pin,
    prepare,
    refuse_a_fake_judge,
    refuse_a_fake_judged_baseline,
)

__all__ = [
    "BOOTSTRAP",
    "EXIT_ERROR",
    "EXIT_PASS",
    "EXIT_REGRESSION",
    "FAKE_JUDGE",
    "GATE_EXIT_CODES",
    "REBASELINE_HINT",
    "Acceptance",
    "BaseConfig",
    "Comparison",
    "GateOptions",
    "GateOutcome",
    "History",
    "PinnedProject",
    "QuestionChange",
    "Uncompared",
    "Verdict",
    "accepted_in_force",
    "baseline_hashes",
    "broken_notice",
    "compare_runs",
    "decide",
    "needs_base_config",
    "pin",
    "prepare",
    "question_hashes",
    "refuse_a_fake_judge",
    "refuse_a_fake_judged_baseline",
]
