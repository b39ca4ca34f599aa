"""What the report says, in words: pure helpers the templates print (rag_ci.core.reporting.render).

A release manager reads the PR comment's first screen and decides: what was compared (the
commits), what kind of failure it is (routing leaks, regressions, worse), where (corpus,
stage), why (the evidence in the row) and what to do next. Every helper here returns plain
text built from numbers, rag-ci's own words and untrusted names (ids, corpora, sources); the
templates escape all of it where they print it. The cells of one question's row (its metrics,
its evidence, its notes, its accepted-file entry) are rag_ci.core.reporting.rows'.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.reporting.template_functions import template_filter, template_global
from rag_ci.core.results import RunResult
from rag_ci.core.scoring.verdict import cut_at_word

SHORT_SHA = 7
STAGE_TITLES = {
    "source": "Source changed",
    "retrieval": "Retrieval",
    "generation": "Generation",
    "error": "Errors",
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


@template_global
def short_sha(sha: str | None) -> str:
    return sha[:SHORT_SHA] if sha else "unknown commit"


@template_global
def dirty_words(dirty: bool | None) -> str:
    """Said after a commit whose checkout had uncommitted changes: the run is not that commit."""
    return " + uncommitted changes" if dirty else ""


@template_global
def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


# --- what fails the gate, by kind ---------------------------------------------------------


@template_global
def leak_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    """Every question that leaks now: regressions, worse and still-leaking questions alike."""
    return cmp.leaking


@template_global
def regression_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    """The regressions shown as rows: a conversation's turn following from an earlier failing one
    is named on that turn's row (rag_ci.core.comparison.conversation_turns), not a row of its own."""
    return tuple(c for c in cmp.regressions if c.new_verdict != "routing_error" and c.id not in folded(cmp))


def folded(cmp: Comparison) -> set[str]:
    """The conversation turns named on an earlier failing turn's row instead of a row of their own."""
    if not cmp.following:
        return set()
    failing = {c.id for c in (*cmp.regressions, *cmp.worse)}
    return {turn for turn, leader in cmp.following.items() if leader in failing}


@template_global
def worse_rows(cmp: Comparison) -> tuple[QuestionChange, ...]:
    return tuple(c for c in cmp.worse if c.new_verdict != "routing_error" and c.id not in folded(cmp))


@template_global
def gate_kinds(cmp: Comparison) -> list[str]:
    """['13 routing leaks', '2 regressions', '1 worse']: what fails the gate, leaks first."""
    parts = []
    if leak_rows(cmp):
        parts.append(plural(len(leak_rows(cmp)), "routing leak"))
    if regression_rows(cmp) or not cmp.gating:
        parts.append(plural(len(regression_rows(cmp)), "regression"))
    if worse_rows(cmp):
        parts.append(f"{len(worse_rows(cmp))} worse")
    if folded(cmp):  # a conversation's later turns, named on the row of the turn that broke
        parts.append(f"{plural(len(folded(cmp)), 'later turn')} following from them")
    return parts


def stage_of(change: QuestionChange) -> str:
    if change.new_verdict == "routing_error":
        return "routing"
    if change.new_verdict == "fail" and change.failure_stage in ("source", "retrieval", "generation"):
        return change.failure_stage
    return "error" if change.new_verdict == "error" else "retrieval" if change.failure_stage else "generation"


@template_global
def stage_groups(changes: Sequence[QuestionChange]) -> list[tuple[str, list[QuestionChange]]]:
    """('Retrieval', rows), ('Generation', rows), ('Errors', rows), in that order, empty ones left out."""
    groups = []
    for stage, title in STAGE_TITLES.items():
        members = [c for c in changes if stage_of(c) == stage]
        if members:
            groups.append((title, members))
    return groups


@template_global
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


@template_global
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


@template_global
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
    if cmp.judge_noise:  # the verdicts listed under "Unstable verdicts", counted the same
        parts.append(plural(len(cmp.judge_noise), "unstable verdict"))
    return parts


PASTE_IN_MARKDOWN = "the entries to paste are under each group's table"


@template_global
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
        # Noise is worth a re-run only while a gating row stands on one answer and one verdict:
        # a row re-asked, or judged again on both sides, is confirmed.
        if any(not (c.reasked or c.judge_confirmation) for c in regression_rows(cmp) + worse_rows(cmp)):
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


@template_global
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


def code_block(text: str, info: str = "") -> str:
    """A fenced code block that no backtick run inside can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


@template_global
def gate_off_after_merge(policy_changes: Sequence[str]) -> bool:
    """Whether the PR's own gate policy, once merged, would gate nothing on main."""
    return any(line.startswith("gate.fail_on ") and line.endswith("→ never") for line in policy_changes)


LOG_LINES, LOG_LINE_CHARS = 12, 200  # the target's log shown in a report: its last lines, each cut


@template_global
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


@template_filter("log_block")
def log_block(text: str) -> str:
    """The target's log lines as a fenced text block: shown as written, inert (no markup, no mention)."""
    return code_block(text, "text")
