"""What `rag-ci questions generate` prints: the bounds before it drafts, the `--estimate`
lines instead of drafting, and the summary after it (docs/questions.md).

Apart from the drafting itself (rag_ci.drafting.question_drafts), which fills an Outcome as it
goes: here the Outcome becomes the lines the user reads (calls and cost, the mix of kinds,
what was dropped and why, a warning when fewer adversarial drafts were kept than asked for).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rag_ci.core.config import WriterConfig
from rag_ci.core.questionset.draft_plan import ADVERSARIAL, Plan
from rag_ci.core.questionset.drafts import Draft, Rejected
from rag_ci.errors import RagCiError


@dataclass
class Outcome:
    """What a generate run did, for its summary."""

    plan: Plan
    writer: str
    added: list[Draft] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    dropped: list[tuple[Draft, str]] = field(default_factory=list)  # duplicates, with the reason
    returned: int = 0  # goldens DeepEval returned
    failed_jobs: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    time_limit_s: float | None = None
    unfinished: int = 0  # writer jobs the time limit ended
    # Writer calls (answered) by what they drafted: each document's own jobs, or the two kinds
    # that belong to no single document ("cross-corpus", "out-of-scope").
    calls_per_document: dict[str, int] = field(default_factory=dict)


def bounds_line(writer_config: WriterConfig, time_limit_s: float) -> str:
    """The bounds a generate run keeps, printed before it starts (issue 34 §6)."""
    from rag_ci.drafting.writer import MAX_REPLY_CHARS

    return (
        f"bounds: the drafting stops after {duration(time_limit_s)} (--time-limit, writer.time_limit_s), keeping what "
        f"it drafted by then; each writer call waits at most {writer_config.timeout_s:g} s (writer.timeout_s, "
        f"{writer_config.max_retries} retries) and a reply may have {MAX_REPLY_CHARS:,} characters"
    )


def duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 and seconds % 60 == 0 else f"{seconds:g} s"


def _share(part: int, whole: int, asked: float) -> str:
    """part/whole as a percentage, with a decimal when rounding would read as the share asked
    for (24.7 % is below 25 %: "25 %" would not say so)."""
    share = part / whole if whole else 0.0
    text = f"{share:.0%}"
    return f"{share:.1%}" if share < asked - 1e-9 and text == f"{asked:.0%}" else text


def summary(outcome: Outcome, questions_path: Path) -> list[str]:
    """The lines `generate` prints: calls and cost, the mix, what was dropped and why."""
    plan = outcome.plan
    kinds = Counter(d.kind for d in outcome.added)
    adversarial = sum(n for k, n in kinds.items() if k in ADVERSARIAL)
    total = len(outcome.added)
    per_document = outcome.calls / plan.documents if plan.documents else 0.0
    own = [
        n for name, n in outcome.calls_per_document.items() if name not in ("cross-corpus", "out-of-scope")
    ]
    from rag_ci.drafting.writer import TIME_LIMIT_REACHED

    failed = [e for e in outcome.failed_jobs.values() if TIME_LIMIT_REACHED not in e]
    lines = [
        f"writer {outcome.writer}: {outcome.calls} calls, {outcome.input_tokens + outcome.output_tokens:,} tokens, "
        f"${outcome.cost_usd:.4f}; {per_document:.1f} calls per document ({plan.documents} documents, {len(plan.jobs)} jobs)",
        f"calls by what they drafted: {min(own, default=0)}-{max(own, default=0)} per document of its own drafts"
        + "".join(
            f", {outcome.calls_per_document[k]} for the {k} drafts"
            for k in ("cross-corpus", "out-of-scope")
            if k in outcome.calls_per_document
        ),
        f"asked for {plan.total} drafts, DeepEval returned {outcome.returned}"
        + (f"; {len(failed)} job(s) failed: {failed[0]}" if failed else ""),
    ]
    if outcome.unfinished:
        lines.append(
            f"time limit of {duration(outcome.time_limit_s or 0)} reached: {outcome.unfinished} of {len(plan.jobs)} "
            "writer jobs did not finish; the drafts of the others are kept. Run again with --uncovered-only to "
            "draft the rest, or raise --time-limit (writer.time_limit_s)"
        )
    lines.append(
        f"added {total}: "
        + ", ".join(
            f"{kinds.get(k, 0)} {k.replace('_', '-')}"
            for k in ("plain", "misspelt", "vague", "cross_corpus", "out_of_scope")
        )
        + f" ({adversarial} adversarial, {_share(adversarial, total, plan.asked)})"
        if total
        else "added none"
    )
    if total and outcome.writer == "fake":
        lines.append(_fake_writer_note(outcome.added))
    if plan.cross_corpus_note:
        lines.append(plan.cross_corpus_note)
    reasons = Counter(_kind_of_reason(r.reason) for r in outcome.rejected) + Counter(
        _kind_of_reason(r) for _, r in outcome.dropped
    )
    if reasons:
        lines.append(
            f"dropped {len(outcome.rejected) + len(outcome.dropped)}: "
            + "; ".join(
                f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
            )
        )
        for draft, reason in outcome.dropped[:10]:
            lines.append(f"  duplicate: {draft.question[:300]!r}: {reason}")
        for item in outcome.rejected[:10]:
            lines.append(f"  {item.reason}: {item.written.question[:300]!r}")
    if total:
        if adversarial / total + 1e-9 < plan.asked:
            lines.append(
                f"warning: {_share(adversarial, total, plan.asked)} of the drafts are adversarial, below the "
                f"{plan.asked:.0%} asked for (adversarial drafts were dropped); run again with another --seed for more"
            )
        lines.append(
            f"appended to {questions_path}: {outcome.added[0].id} … {outcome.added[-1].id}, each `status: draft`; "
            f"next: `rag-ci questions review`, then `rag-ci questions apply reviewed.yml`"
        )
    return lines


def _fake_writer_note(added: list[Draft]) -> str:
    """How many of the fake writer's questions are placeholders: it phrases questions by rules."""
    from rag_ci.judges.fake_writer import PLACEHOLDER_PATTERN

    placeholders = sum(1 for d in added if PLACEHOLDER_PATTERN.search(d.question))
    return (
        f"fake writer: the questions are phrased by rules from their reference sentence, {placeholders} of {len(added)} "
        'are placeholders ("What do the documents say about …?": no rule fitted the sentence); a dry run\'s '
        "drafts, to be edited in review"
    )


def estimate_lines(plan: Plan, writer_config: WriterConfig, label: str) -> list[str]:
    """What `generate --estimate` prints: calls, tokens and dollars, computed without calling
    anything; a model rag-ci has no price for gets calls and tokens, and says so."""
    from rag_ci.drafting.writer_check import FAKE_WRITER_MODEL
    from rag_ci.drafting.writer_estimate import estimate
    from rag_ci.judges.build import model_price
    from rag_ci.judges.providers import provider_spec

    priced = writer_config.model_copy(update={"model": writer_config.model or FAKE_WRITER_MODEL})
    try:
        price = model_price(priced, provider_spec(priced.provider), role="writer")
        unpriced = None
    except RagCiError:
        price, unpriced = None, priced.model
    result = estimate(plan, price)
    head = (
        f"{plan.total} drafts from {plan.documents} documents in {len(plan.jobs)} jobs: {result.calls:,} writer calls "
        f"(up to {result.max_calls:,} if DeepEval's filtration rewrites every question), "
        f"~{result.input_tokens + result.output_tokens:,} tokens"
    )
    if result.cost_usd is None:
        line = (
            f"{head} ({result.input_tokens:,} in, {result.output_tokens:,} out), dollars unknown: rag-ci has no price "
            f"for '{unpriced}' (set `writer.prices: {{input_per_mtok: ..., output_per_mtok: ...}}`) with {label}; "
            "nothing was called"
        )
    else:
        line = f"{head}, ~${result.cost_usd:.2f} (up to ~${result.max_cost_usd:.2f}) with {label}; nothing was called"
    return [line] + ([plan.cross_corpus_note] if plan.cross_corpus_note else [])


def _kind_of_reason(reason: str) -> str:
    if reason.startswith(("same words as", "near-duplicate of")):
        return "duplicates"
    return reason.split(" (", 1)[0].split(":", 1)[0]
