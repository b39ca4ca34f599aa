"""Say, in words, why two judge fingerprints differ and how to re-baseline. Pure."""

from __future__ import annotations

from typing import Any

from rag_ci.core.results import JudgeFingerprint

REBASELINE_HOW = (
    "To compare again, re-baseline: run the rag-ci workflow on the base branch with `workflow_dispatch` and "
    "`rebaseline: true` (or run `rag-ci run` on main and replace the `rag-ci-baseline` artifact); "
    "or revert the judge change in this PR."
)


def fingerprint_differences(baseline: JudgeFingerprint, head: JudgeFingerprint) -> list[str]:
    """One line per difference, baseline value first."""
    lines: list[str] = []
    labels = (
        ("provider", "judge provider"),
        ("model", "judge model"),
        ("temperature", "judge temperature"),
        ("deepeval_version", "DeepEval version"),
        ("prompt_hash", "DeepEval metric prompt templates (hash)"),
    )
    for field, label in labels:
        before, after = getattr(baseline, field), getattr(head, field)
        if before != after:
            lines.append(f"{label}: baseline {before!r}, this run {after!r}")
    for name in sorted(set(baseline.metrics) | set(head.metrics)):
        before, after = baseline.metrics.get(name), head.metrics.get(name)
        if before == after:
            continue
        if before is None:
            lines.append(f"metric {name}: not judged on the baseline, judged now")
        elif after is None:
            lines.append(f"metric {name}: judged on the baseline, not now")
        else:
            for key in sorted(set(before) | set(after)):
                if before.get(key) != after.get(key):
                    lines.append(f"metric {name}.{key}: baseline {_show(before.get(key))}, this run {_show(after.get(key))}")
    return lines


def describe_fingerprint_difference(baseline: JudgeFingerprint, head: JudgeFingerprint) -> str:
    """A message for an incompatible baseline: what differs, then how to re-baseline ('' when equal)."""
    lines = fingerprint_differences(baseline, head)
    if not lines:
        return ""
    body = "\n".join(f"  - {line}" for line in lines)
    return f"The baseline was judged by a different judge, so its verdicts are not comparable:\n{body}\n{REBASELINE_HOW}"


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
