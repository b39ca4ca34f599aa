"""What the report says, in words: pure helpers the templates print (rag_ci.core.reporting.render).

A release manager reads the PR comment's first screen and decides: what was compared (the
commits), what kind of failure it is (routing leaks, regressions, worse), where (corpus,
stage), why (the evidence in the row) and what to do next. Every helper here returns plain
text built from numbers, rag-ci's own words and untrusted names (ids, corpora, sources); the
templates escape all of it where they print it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.comparison.question_change import MetricChange
from rag_ci.core.results import RunResult
from rag_ci.core.scoring.verdict import cut_at_word

SHORT_SHA = 7
STAGE_TITLES = {
    "source": "Source changed",
    "retrieval": "Retrieval",
    "generation": "Generation",
    "error": "Errors",
}
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
RENAMED_SHOWN = 5  # renamed questions named in the counts line; the rest counted


@dataclass(frozen=True)
class Commits:
    """What was compared: the baseline's commit (branch, run) and this run's."""

    base_sha: str | None = None
    base_branch: str | None = None
    base_url: str | None = None  # the baseline's workflow run
    head_sha: str | None = None
    head_url: str | None = None  # this workflow run
    # The run's checkout had uncommitted changes: the sha alone is not what ran (RunMeta.git_dirty).
    base_dirty: bool = False
    head_dirty: bool = False
    # What the head commit is, when it is not the pull request's: "the merge queue's commit".
    head_label: str | None = None

    @property
    def known(self) -> bool:
        return bool(self.base_sha or self.head_sha)

    @classmethod
    def of_runs(cls, base: RunResult | None, head: RunResult) -> Commits:
        """From the results files alone (the command line): their recorded shas and refs."""
        branch = (
            base.meta.git_ref.removeprefix("refs/heads/") if base is not None and base.meta.git_ref else None
        )
        return cls(
            base_sha=base.meta.git_sha if base else None,
            base_branch=branch,
            head_sha=head.meta.git_sha,
            base_dirty=bool(base and base.meta.git_dirty),
            head_dirty=bool(head.meta.git_dirty),
        )


def short_sha(sha: str | None) -> str:
    return sha[:SHORT_SHA] if sha else "unknown commit"


def dirty_words(dirty: bool | None) -> str:
    """Said after a commit whose checkout had uncommitted changes: the run is not that commit."""
    return " + uncommitted changes" if dirty else ""


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


# --- what fails the gate, by kind ---------------------------------------------------------


def leak_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    """Every question that leaks now: regressions, worse and still-leaking questions alike."""
    return cmp.leaking


def regression_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    return tuple(c for c in cmp.regressions if c.new_verdict != "routing_error")


def worse_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    return tuple(c for c in cmp.worse if c.new_verdict != "routing_error")


def gate_kinds(cmp: Comparison) -> list[str]:
    """['13 routing leaks', '2 regressions', '1 worse']: what fails the gate, leaks first."""
    parts = []
    if leak_rows(cmp):
        parts.append(plural(len(leak_rows(cmp)), "routing leak"))
    if regression_rows(cmp) or not cmp.gating:
        parts.append(plural(len(regression_rows(cmp)), "regression"))
    if worse_rows(cmp):
        parts.append(f"{len(worse_rows(cmp))} worse")
    return parts


def stage_of(change: QuestionChange) -> str:
    if change.new_verdict == "routing_error":
        return "routing"
    if change.new_verdict == "fail" and change.failure_stage in ("source", "retrieval", "generation"):
        return change.failure_stage
    return "error" if change.new_verdict == "error" else "retrieval" if change.failure_stage else "generation"


def stage_groups(changes: Sequence[QuestionChange]) -> list[tuple[str, list[QuestionChange]]]:
    """('Retrieval', rows), ('Generation', rows), ('Errors', rows), in that order, empty ones left out."""
    groups = []
    for stage, title in STAGE_TITLES.items():
        members = [c for c in changes if stage_of(c) == stage]
        if members:
            groups.append((title, members))
    return groups


def failing_sections(cmp: Comparison) -> list[tuple[str, int, str]]:
    """[('Routing leaks', 13, 'routing-leaks-13'), ('Retrieval', 2, 'retrieval-2'), ...]: the report's
    sections of questions that fail the gate, in order, with their headings' fragments: the index
    at the top of a long report."""
    sections = [("Routing leaks", len(leak_rows(cmp)), "")] if leak_rows(cmp) else []
    sections += [(title, len(rows), "") for title, rows in stage_groups(regression_rows(cmp))]
    if worse_rows(cmp):
        sections.append(
            (
                "Worse",
                len(worse_rows(cmp)),
                anchor(f"Worse ({len(worse_rows(cmp))}): already failing, now worse"),
            )
        )
    return [(title, n, fragment or anchor(f"{title} ({n})")) for title, n, fragment in sections]


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def where_line(cmp: Comparison) -> str:
    """'du2 8 · du3 4 · du2 + du3 1 — routing 13': the questions failing the gate by the corpora
    they ask (each question counted once), by stage."""
    corpora = Counter(" + ".join(c.corpora) for c in cmp.gating if c.corpora)
    stages = Counter(stage_of(c) for c in cmp.gating)
    by_corpus = " · ".join(
        f"{name} {n}" for name, n in sorted(corpora.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    by_stage = " · ".join(
        f"{'source changed' if name == 'source' else name} {n}" for name, n in stages.most_common()
    )
    return f"{by_corpus} — {by_stage}" if by_corpus else by_stage


def counts_line(cmp: Comparison) -> list[str]:
    """The rest of the counts after what gates: accepted, gains, the questions the PR removed,
    added or edited (the ones that passed and are gone, or fail, said so), flaky, unstable."""
    parts = []
    if cmp.accepted:
        parts.append(f"{len(cmp.accepted)} accepted")
    noisy = sum(1 for c in cmp.gains if c.possibly_noise)
    parts.append(plural(len(cmp.gains), "gain") + (f" ({noisy} possibly noise)" if noisy else ""))
    if cmp.removed:
        passing = len(cmp.removed_passing)
        parts.append(
            f"{len(cmp.removed)} removed" + (f" ({passing} passed on the baseline)" if passing else "")
        )
    if cmp.new:
        failing = len(cmp.new_failing)
        parts.append(f"{len(cmp.new)} new" + (f" ({failing} failing)" if failing else ""))
    if cmp.changed:
        failing = len(cmp.edited_failing)
        parts.append(f"{len(cmp.changed)} edited" + (f" ({failing} passed, fail now)" if failing else ""))
    if cmp.renamed:
        shown = ", ".join(f"{old} → {new}" for new, old in cmp.renamed[:RENAMED_SHOWN])
        more = f" and {len(cmp.renamed) - RENAMED_SHOWN} more" if len(cmp.renamed) > RENAMED_SHOWN else ""
        parts.append(f"{len(cmp.renamed)} renamed ({shown}{more})")
    if cmp.flaky:
        parts.append(f"{len(cmp.flaky)} flaky")
    if cmp.unstable:
        parts.append(f"{len(cmp.unstable)} unstable")
    return parts


PASTE_IN_MARKDOWN = "the entries to paste are under each group's table"


def next_line(
    cmp: Comparison | None, verdict: str, broken: bool = False, paste: str = PASTE_IN_MARKDOWN
) -> str | None:
    """One line: what to do now. `paste` says where the accepted-file entries are in this view."""
    if broken:
        return "fix the cause above and re-run the job; nothing was compared."
    if cmp is None:
        return None
    steps = []
    if leak_rows(cmp):
        steps.append("fix the routing (a routing leak is never accepted)")
    rows = regression_rows(cmp) + worse_rows(cmp)
    if any(stage_of(c) == "source" for c in rows):
        steps.append("update the reference or the document where a cited source changed in this PR")
    if any(stage_of(c) == "error" for c in rows):  # an error is the target's to fix, not a change to accept
        steps.append("fix what makes the target error (the Errors table says what it answered)")
    if any(stage_of(c) not in ("source", "error") for c in rows):
        steps.append(f"fix the regressions, or accept an intended one with a reason ({paste})")
        if any(not c.reasked for c in regression_rows(cmp)) or cmp.unstable:
            steps.append("re-run the job if you think it is noise")
    if cmp.budget_breaches:
        steps.append("bring the budget back under its limit")
    if any(not s.insufficient for s in cmp.stale_accepted):
        steps.append("remove the stale accepted entries")
    if any(s.insufficient for s in cmp.stale_accepted):
        steps.append("complete the accepted entries that do not cover their regression")
    if not steps:
        return None
    text = "; ".join(steps)
    # A passing verdict with rows that would gate says why they do not: only then is it true.
    if verdict == "fail" or not cmp.gating:
        return text + "."
    if cmp.fail_on == "never":
        return text + " (the gate is off for this run)."
    if cmp.fail_on == "significant_drop":
        return text + " (not failing: the gate is significant_drop and the drop is not significant)."
    return text + "."


def significance_line(cmp: Comparison) -> str | None:
    """'pass rate 48 % → 44 %, could be chance (McNemar p = 0.29)': context beside the
    per-question gate; nothing when no question flipped."""
    overall = next((r.test for r in cmp.significance if r.scope == "overall"), None)
    if overall is None or overall.worse + overall.better == 0:
        return None
    from rag_ci.core.comparison.stats import format_p

    p = format_p(overall.p_value)
    p = p if p.startswith("<") else f"= {p}"
    confirmed = [c for c in regression_rows(cmp) if c.reasked and c.answers_passed == 0]
    if overall.significant:
        chance = f"unlikely to be chance (McNemar p {p})"
    elif confirmed:  # few flips: the test cannot tell, but each one was re-asked and failed every time
        chance = (
            f"too few flips for this test to rule out chance (McNemar p {p}), but the re-asks confirm "
            f"{plural(len(confirmed), 'regression')}: every answer failed"
        )
    else:
        chance = f"could be chance (McNemar p {p})"
    return (
        f"pass rate {overall.before * 100:.0f} % → {overall.after * 100:.0f} % ({overall.worse} of {overall.n} questions "
        f"flipped down, {overall.better} up), {chance}"
    )


# --- one row per question ------------------------------------------------------------------


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


def metrics_cell(change: QuestionChange, params: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    cells = [metric_cell(m, params) for m in change.failing_metrics]
    return " · ".join(cells) or f"{change.old_verdict or 'new'} → {change.new_verdict}"


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
    return " · ".join(p for p in (*parts, answers) if p)


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


def noise_words(change: QuestionChange) -> str:
    """Why a gain may be noise, from what the baseline actually asked."""
    if not change.possibly_noise:
        return ""
    if change.old_answers <= 1:
        return "possibly noise: the baseline's failure was one answer, never re-asked"
    return f"possibly noise: the baseline passed {change.old_answers_passed}/{change.old_answers} answers"


def leak_words(change: QuestionChange) -> str:
    """'leaked: 2 contexts from du3'."""
    what = plural(change.leaked_contexts, "context") if change.leaked_contexts else "contexts"
    return f"leaked: {what} from {', '.join(change.leaks) or 'another corpus'}"


def baseline_words(change: QuestionChange) -> str:
    if change.old_verdict is None:
        return "new question"
    return {"pass": "passed", "fail": "failed", "routing_error": "leaked too", "error": "errored"}.get(
        change.old_verdict, change.old_verdict
    )


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


def accept_entry(change: QuestionChange) -> str:
    """The accepted-file entry that would let this regression pass, to paste (docs/accepted.md).
    Values are JSON strings (valid YAML): a quoted hash stays text, a quoted reason keeps its '#'."""
    return (
        f"  - id: {_inert_json(change.id)}\n    question_hash: {_inert_json(change.question_hash or '')}\n"
        '    reason: "…"  # why this change is intended (quote it: an unquoted # starts a comment)\n'
    )


def _inert_json(text: str) -> str:
    """A JSON (and YAML) string with `<`, `>` and `&` written as \\u escapes: the same value
    once read, and no HTML in the comment's source even if a renderer ignored the fence."""
    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def code_block(text: str, info: str = "") -> str:
    """A fenced code block that no backtick run inside can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def gate_off_after_merge(policy_changes: Sequence[str]) -> bool:
    """Whether the PR's own gate policy, once merged, would gate nothing on main."""
    return any(line.startswith("gate.fail_on ") and line.endswith("→ never") for line in policy_changes)


LOG_LINES, LOG_LINE_CHARS = 12, 200  # the target's log shown in a report: its last lines, each cut


def target_log(diagnostics: str | None, said: Sequence[str] = ()) -> str:
    """The target's last log lines (already redacted by the run), for a report: at most LOG_LINES,
    each cut at LOG_LINE_CHARS, control characters dropped, without the lines the errors above
    already quote (`said`): the traceback the error hid, never its last line twice."""
    quoted = " ".join(" ".join(s.split()) for s in said)
    lines = []
    for line in (diagnostics or "").splitlines():
        clean = re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", "", line).rstrip()
        flat = " ".join(clean.split())
        if flat and (len(flat) < 12 or flat not in quoted):
            lines.append(clean if len(clean) <= LOG_LINE_CHARS else clean[: LOG_LINE_CHARS - 1] + "…")
    return "\n".join(lines[-LOG_LINES:])


def whole_lines(text: str, limit: int) -> list[str]:
    """The lines of `text` that fit in `limit` characters, whole (a list of 14 problems is never
    cut inside its 13th, nor its 14th dropped unsaid), then how many more; a first line longer
    than the limit is cut at a word."""
    lines = text.splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > limit:
            break
        kept.append(line)
        used += len(line) + 1
    if not kept and lines:
        return [
            cut_at_word(lines[0], limit),
            *([f"…and {len(lines) - 1} more lines"] if len(lines) > 1 else []),
        ]
    rest = len(lines) - len(kept)
    return kept + ([f"…and {rest} more line{'s' if rest != 1 else ''}"] if rest else [])


def log_block(text: str) -> str:
    """The target's log lines as a fenced text block: shown as written, inert (no markup, no mention)."""
    return code_block(text, "text")
