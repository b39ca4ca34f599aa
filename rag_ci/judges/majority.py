"""A judged flip confirmed by a majority of verdicts (gate.confirm_runs): what the votes decide."""

from __future__ import annotations

from rag_ci.core.results import MetricResult


def _votes(runs: list[MetricResult]) -> list[bool]:
    return [r.passed for r in runs if r.error is None and r.passed is not None]


def majority_reached(runs: list[MetricResult], confirm_runs: int) -> bool:
    """More than half of the `confirm_runs` planned verdicts agree: the rest cannot change the outcome."""
    votes = _votes(runs)
    return 2 * max(votes.count(True), votes.count(False)) > confirm_runs


def choose_by_majority(runs: list[MetricResult], baseline_passed: bool | None) -> int:
    """Index of the run that stands for the majority verdict (a tie keeps the baseline's verdict)."""
    votes = _votes(runs)
    passes, fails = votes.count(True), votes.count(False)
    verdict = True if passes > fails else False if fails > passes else baseline_passed
    return next((i for i, r in enumerate(runs) if r.error is None and r.passed is verdict), 0)


def decide_by_majority(runs: list[MetricResult], baseline_passed: bool | None) -> MetricResult:
    """Majority of the verdicts that did not error; a tie keeps the baseline's verdict."""
    cost = sum(r.judge_cost_usd for r in runs)
    votes = _votes(runs)
    chosen = runs[choose_by_majority(runs, baseline_passed)]
    return chosen.model_copy(
        update={"confirm_runs": votes, "unstable": len(set(votes)) > 1, "judge_cost_usd": cost}
    )
