"""One row per question: the cells of a question's row in the report's tables (rag_ci.core.reporting.render).

A row is where a release manager reads why one question fails the gate: which metrics dropped
and how far (`metrics_cell`), the evidence (`why_cell`), what the baseline did, the notes under
its id, and the accepted-file entry to paste for an intended regression (`accept_entry`). Kept
apart from rag_ci.core.reporting.view, whose helpers speak of the report as a whole (the
headline, the counts, what to do next); like them, every helper returns plain text that the
templates escape where they print it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rag_ci.core.comparison.compare import QuestionChange
from rag_ci.core.comparison.question_change import MetricChange
from rag_ci.core.reporting.template_functions import template_filter, template_global
from rag_ci.core.reporting.view import code_block, plural, short_sha, stage_of
from rag_ci.core.results import RunResult

# Short names in rows; a `k` parameter joins the name ("hit@5").
METRIC_LABELS = {
    "hit_at_k": "hit@{k}",
    "keyword_coverage": "keyword",
    "ndcg": "nDCG@{k}",
    "mrr": "MRR",
    "source_recall": "source recall@{k}",
    "source_precision": "source precision@{k}",
    "contextual_precision": "ctx precision",
    "contextual_recall": "ctx recall",
    "answer_relevancy": "relevancy",
}


def metric_label(name: str, params: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    template = METRIC_LABELS.get(name, name)
    k = (params or {}).get(name, {}).get("k")
    return template.format(k=k if k else "k")


def metric_cell(metric: MetricChange, params: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """'keyword 1.00→0.50 (≥ 0.60)'; a pass/fail metric (0 or 1, bar 1) as 'hit@5 1→0'."""
    name = metric_label(metric.name, params)
    binary = metric.old in (0.0, 1.0) and metric.new in (0.0, 1.0) and metric.threshold in (None, 1.0)
    if binary:
        return f"{name} {metric.old:.0f}→{metric.new:.0f}"
    bar = f" (≥ {metric.threshold:.2f})" if metric.threshold is not None else ""
    return f"{name} {_num(metric.old)}→{_num(metric.new)}{bar}"


@template_global
def metrics_cell(change: QuestionChange, params: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    cells = [metric_cell(m, params) for m in change.failing_metrics]
    return " · ".join(cells) or f"{change.old_verdict or 'new'} → {change.new_verdict}"


@template_global
def why_cell(change: QuestionChange, limit: int = 2) -> str:
    """The evidence in the row: what retrieval lost (retrieval), the metric's own reason
    (generation), the error; then how many answers failed."""
    failing = {m.name for m in change.failing_metrics}  # their drop is in the row already
    evidence = [e for e in change.retrieval_evidence if e.split(" ", 1)[0] not in failing]
    if change.new_verdict == "routing_error":
        parts = [leak_words(change)]
    elif change.worse_because:  # a changed source is the evidence that matters, not its re-cut chunks
        # "lost X 1.00 → 0.00 (passed on the baseline)" would repeat the failing cell beside it.
        because = (
            "these passed on the baseline"
            if change.worse_because.startswith("lost ") and change.failing_metrics
            else change.worse_because
        )
        parts = [
            because,
            source_words(change) if stage_of(change) == "source" else "",
            *evidence[: limit - 1],
        ]
        parts = [p for p in parts if p][:limit]
    elif stage_of(change) == "source":
        reasons = [m.reason for m in change.failing_metrics if m.reason]
        parts = [source_words(change), *reasons[: limit - 1]]
    elif stage_of(change) == "retrieval" and change.retrieval_evidence:
        parts = evidence[:limit] or [m.reason for m in change.failing_metrics if m.reason][:limit]
    else:
        reasons = [m.reason for m in change.failing_metrics if m.reason]
        parts = reasons[:limit] or [change.reason or ""]
    answers = answers_words(change)
    return " · ".join(p for p in (*parts, change.judge_confirmation, answers) if p)


def answers_words(change: QuestionChange) -> str:
    """'0/4 answers passed, re-asked 3×' when the question was asked more than once."""
    if change.answers <= 1:
        return ""
    asked = f", re-asked {change.answers - 1}×" if change.reasked else ""
    if (
        change.distinct_answers == 1
    ):  # the same bytes each time: one answer, however often its verdict was reused
        votes = change.judge_votes
        if not votes:
            return f"1 distinct answer{asked}: {'passes' if change.distinct_passed else 'fails'}"
        return f"1 distinct answer{asked}, judged {len(votes)}×: {votes.count(False)} fail, {votes.count(True)} pass"
    if change.distinct_answers < change.answers:
        return f"{change.distinct_passed}/{change.distinct_answers} distinct answers passed{asked}"
    return f"{change.answers_passed}/{change.answers} answers passed{asked}"


@template_global
def noise_words(change: QuestionChange) -> str:
    """Why a gain may be noise, from what the baseline actually asked."""
    if not change.possibly_noise:
        return ""
    if change.old_answers <= 1:
        return "possibly noise: the baseline's failure was one answer, never re-asked"
    return f"possibly noise: the baseline passed {change.old_answers_passed}/{change.old_answers} answers"


@template_global
def leak_words(change: QuestionChange, head: RunResult | None = None) -> str:
    """'leaked: 2 contexts from du3', and by which call when the contexts came from the search
    call of `target.retrieve` (the fix is that call's filter, not the answer's)."""
    what = plural(change.leaked_contexts, "context") if change.leaked_contexts else "contexts"
    through = (
        " (through target.retrieve's search call)" if head and head.meta.contexts_from == "retrieve" else ""
    )
    return f"leaked: {what} from {', '.join(change.leaks) or 'another corpus'}{through}"


@template_global
def baseline_words(change: QuestionChange) -> str:
    if change.old_verdict is None:
        return "new question"
    return {"pass": "passed", "fail": "failed", "routing_error": "leaked too", "error": "errored"}.get(
        change.old_verdict, change.old_verdict
    )


@template_global
def row_notes(change: QuestionChange) -> list[str]:
    """Short labels under the question's id."""
    notes = list(change.notes)
    if change.renamed_from:
        notes.insert(0, f"renamed from {change.renamed_from}")
    if change.baseline_carried:
        notes.append(
            "compared with its last good verdict"
            + (f" ({short_sha(change.carried_from_sha)})" if change.carried_from_sha else "")
        )
    if change.source_changed and stage_of(change) != "source":  # in its own group, the row says it
        notes.append(
            "source changed in this PR — the reference may be stale: " + ", ".join(change.source_changed)
        )
    return notes


def source_words(change: QuestionChange) -> str:
    """'du2/battery.md changed in this PR: the reference may be stale'."""
    what = ", ".join(change.source_changed)
    return f"{what} changed in this PR: the reference may be stale"


@template_global
def accept_entry(change: QuestionChange) -> str:
    """The accepted-file entry that would let this regression pass, to paste (docs/accepted.md).
    Values are JSON strings (valid YAML): a quoted hash stays text, a quoted reason keeps its '#'."""
    return (
        f"  - id: {_inert_json(change.id)}\n    question_hash: {_inert_json(change.question_hash or '')}\n"
        '    reason: "…"  # why this change is intended (quote it: an unquoted # starts a comment)\n'
    )


@template_filter("accept_yaml")
def accept_yaml(changes: Sequence[QuestionChange]) -> str:
    """The accepted-file entries of regressions as one fenced YAML block (inert: JSON-quoted values in a fence)."""
    return code_block("".join(accept_entry(c) for c in changes), "yaml")


def _inert_json(text: str) -> str:
    """A JSON (and YAML) string with `<`, `>` and `&` written as \\u escapes: the same value
    once read, and no HTML in the comment's source even if a renderer ignored the fence."""
    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
