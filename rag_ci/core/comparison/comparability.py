"""Which metrics of two runs can be compared (docs/gate.md).

A metric is comparable when its whole definition is equal in both runs: its name and
configuration (threshold, k, criteria) and, for a judged metric, what makes its verdicts
(judge provider, model, temperature, DeepEval version and prompt templates, the metric's
own DeepEval configuration). A metric whose definition changed, or that exists in one
run only, is "not comparable": it is left out of both runs' verdicts, and every other
metric is still compared and gated.

Only a different results or question-set schema makes the whole comparison impossible.

This is the comparison's first stage (`comparable_runs`): what is comparable is decided here,
once, and every later stage works on the runs it returns. Pure: metadata in, definitions and
filtered runs out.
"""

from __future__ import annotations

import json
from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from rag_ci.core.results import RunMeta, RunResult, Sample
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.core.scoring.verdict import failure_stage, question_verdict
from rag_ci.errors import IncompatibleBaseline

# How to get a comparable baseline again, in words that hold wherever rag-ci runs; the
# GitHub Action says it its own way (rag_ci.action.baseline.in_actions_words).
REBASELINE_HINT = "Re-baseline: make a fresh run on the base branch (`rag-ci run` on main) the new baseline."

JUDGE_PARTS = ("provider", "model", "temperature", "deepeval_version", "prompt_hash")


@dataclass(frozen=True)
class NotComparable:
    """A metric left out of the comparison, with its definition on each side (None: absent)."""

    name: str
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    differences: tuple[str, ...]  # "k: 5 → 3", "judge.model: a → b", "added", "removed"


@dataclass(frozen=True)
class ComparableRuns:
    """The two runs as the comparison sees them: the metrics not comparable left out of both."""

    base: RunResult
    head: RunResult
    not_comparable: tuple[NotComparable, ...]


def comparable_runs(base: RunResult, head: RunResult, *, leave_out: Set[str] = frozenset()) -> ComparableRuns:
    """The runs with every metric not comparable (and `leave_out`) left out of both sides'
    verdicts. Raises IncompatibleBaseline when they cannot be compared at all."""
    check_compatible(base, head)
    not_comparable = not_comparable_metrics(base.meta, head.meta)
    names = set(leave_out) | {n.name for n in not_comparable}
    if names:  # left out of both sides, for the classification and the noise review alike
        base, head = without_metrics(base, names), without_metrics(head, names)
    return ComparableRuns(base, head, not_comparable)


def incompatibilities(base: RunResult, head: RunResult) -> list[str]:
    """What makes the two runs incomparable as a whole; empty when they can be compared.

    Metric thresholds, parameters and the judge are not here: a metric whose definition
    changed is only left out (`Comparison.not_comparable`), the others are still gated."""
    return schema_problems(base.meta, head.meta)


def check_compatible(base: RunResult, head: RunResult) -> None:
    problems = incompatibilities(base, head)
    if problems:
        raise IncompatibleBaseline(
            "The baseline cannot be compared with this run:\n  - "
            + "\n  - ".join(problems)
            + "\n"
            + REBASELINE_HINT
        )


def schema_problems(base: RunMeta, head: RunMeta) -> list[str]:
    """Differences no per-metric comparison can work around."""
    problems = []
    if base.schema_version != head.schema_version:
        problems.append(f"results schema: baseline v{base.schema_version}, this run v{head.schema_version}")
    if base.question_set_schema != head.question_set_schema:
        problems.append(
            f"question-set schema: baseline v{base.question_set_schema}, this run v{head.question_set_schema}"
        )
    return problems


def metric_definitions(meta: RunMeta, *, parameters: bool) -> dict[str, dict[str, Any]]:
    """Each metric's definition as `meta` records it. Without `parameters` only thresholds
    are used: a results.json from before the policy was recorded has nothing else."""
    if parameters and meta.policy is not None:
        definitions = {name: dict(cfg) for name, cfg in meta.policy.metrics.items()}
    else:
        definitions = {name: {"threshold": threshold} for name, threshold in meta.metric_thresholds.items()}
    judge = meta.judge
    if judge is not None:
        for name, identity in judge.metrics.items():
            entry = definitions.setdefault(name, {"threshold": identity.get("threshold")})
            entry["judge"] = {**{part: getattr(judge, part) for part in JUDGE_PARTS}, **identity}
    return definitions


def not_comparable_metrics(base: RunMeta, head: RunMeta) -> tuple[NotComparable, ...]:
    both_recorded = base.policy is not None and head.policy is not None
    old, new = (
        metric_definitions(base, parameters=both_recorded),
        metric_definitions(head, parameters=both_recorded),
    )
    found = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if before is None:
            differences: tuple[str, ...] = ("not in the baseline",)
        elif after is None:
            differences = ("not in this run",)
        else:
            flat_before, flat_after = _flatten(before), _flatten(after)
            differences = tuple(
                f"{key}: {_show(flat_before.get(key))} → {_show(flat_after.get(key))}"
                for key in sorted(set(flat_before) | set(flat_after))
                if flat_before.get(key) != flat_after.get(key)
            )
        found.append(NotComparable(name, before, after, differences))
    return tuple(found)


def without_metrics(result: RunResult, names: set[str]) -> RunResult:
    """`result` as if `names` had not been measured: verdicts and aggregates recomputed."""
    if not names:
        return result
    questions = []
    for record in result.questions:
        kept = {n: m for n, m in record.metrics.items() if n not in names}
        if len(kept) == len(record.metrics):
            questions.append(record)
            continue
        verdict = question_verdict(record.error, record.leaks, kept)
        questions.append(
            record.model_copy(
                update={
                    "metrics": kept,
                    "samples": [_sample_without(s, names) for s in record.samples],
                    "verdict": verdict,
                    "failure_stage": failure_stage(kept) if verdict == "fail" else None,
                    "unstable": any(m.unstable for m in kept.values()),
                }
            )
        )
    return RunResult(meta=result.meta, questions=questions, aggregates=aggregate(questions))


def _sample_without(sample: Sample, names: set[str]) -> Sample:
    """A sample's verdict without `names`: a failure they alone caused is a pass (the paired
    statistics read first samples, and must agree with the verdicts compared)."""
    kept = {n: v for n, v in sample.metrics.items() if n not in names}
    if len(kept) == len(sample.metrics):
        return sample
    verdict = sample.verdict
    if verdict == "fail" and not any(v is False for v in kept.values()):
        verdict = "pass"
    return sample.model_copy(update={"metrics": kept, "verdict": verdict})


def _flatten(definition: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in definition.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def _show(value: Any, limit: int = 60) -> str:
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
