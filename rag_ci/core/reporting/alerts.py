"""What the comment says beside the rows: the alerts at its top (a PR that sets the fake judge,
questions citing no document, documents changed under failing questions, a target that answers
nothing), the accepted file's entries that need a hand, and a failed run's cause in a headline.
Pure helpers the templates print (rag_ci.core.reporting.render), like rag_ci.core.reporting.view's:
plain text built from rag-ci's own words and untrusted names, escaped where printed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rag_ci.core.base.text import is_refusal
from rag_ci.core.comparison.acceptance import StaleAcceptance
from rag_ci.core.comparison.budgets import BudgetCheck
from rag_ci.core.comparison.compare import Comparison, QuestionChange
from rag_ci.core.reporting.template_functions import template_global
from rag_ci.core.results import QuestionResult, RunResult
from rag_ci.core.scoring.verdict import cut_at_word


@template_global
def fake_judge_after_merge(policy_changes: Sequence[str]) -> bool:
    """Whether the PR sets the fake judge, which baseline and full runs refuse (rag_ci.gate):
    such a change never takes effect, it stops main's runs."""
    return any(line.startswith("judge.provider ") and line.endswith("→ fake") for line in policy_changes)


@template_global
def broken_words(broken: str) -> str:
    """Why a run is broken, without the most common error it names
    (rag_ci.core.scoring.verdict.broken_run_reason): the comment lists every cause right below."""
    return broken.split("; most common error (", 1)[0]


@template_global
def budget_limit(check: BudgetCheck) -> str:
    """A budget's limit as configured, with its unit: '+20%', '$0.002', '2.5 s'."""
    if check.limit.strip().endswith("%"):
        return check.limit
    return (
        f"${check.limit}" if check.unit == "usd" else f"{check.limit} s" if check.unit == "s" else check.limit
    )


@template_global
def stale_dead(cmp: Comparison) -> list[StaleAcceptance]:
    return [s for s in cmp.stale_accepted if not s.insufficient]


@template_global
def stale_insufficient(cmp: Comparison) -> list[StaleAcceptance]:
    return [s for s in cmp.stale_accepted if s.insufficient]


@template_global
def flaky_failing(cmp: Comparison, failing: Sequence[Any]) -> int:
    """Flaky questions (not gating) whose verdict in this run is not a pass: said beside the
    pass count, so they do not read as failures."""
    flaky = {f.id for f in cmp.flaky}
    return sum(1 for q in failing if q.id in flaky)


@template_global
def citing_missing(cmp: Comparison) -> list[QuestionChange]:
    """New or edited questions citing a source that names no document of its corpus."""
    return [c for c in (*cmp.new, *cmp.changed) if c.missing_sources]


@template_global
def missing_sources_line(cmp: Comparison, limit: int = 20) -> str:
    found = citing_missing(cmp)
    line = ", ".join(f"{c.id} ({', '.join(c.missing_sources)})" for c in found[:limit])
    return line + (f" and {len(found) - limit} more" if len(found) > limit else "")


# --- a failed run's cause in a headline ---------------------------------------------------------

_ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/])/(?:[^\s/:`'\"]+/)+([^\s/:`'\"]+)")
HEADLINE_CAUSE = 140


@template_global
def headline_cause(cause: str | None, limit: int = HEADLINE_CAUSE) -> str:
    """The first line of a cause, short enough for a headline: an absolute path as its file name
    (a runner's temp folder says nothing; the cause quoted below keeps it whole), a list cut
    between its items with how many more, anything else cut at a word, never inside an id or a URL."""
    lines = (cause or "").strip().splitlines()
    if not lines:
        return "the run stopped"
    first = _ABSOLUTE_PATH.sub(lambda m: m.group(1), " ".join(lines[0].split()))
    # A list of problems of one file (a question set with 14 drafts): the first, and how many more.
    where = lines[0].split(":", 1)[0] + ":"
    alike = sum(1 for line in lines[1:] if line.startswith(where)) if ":" in lines[0] else 0
    more = f" (and {alike} more like it)" if alike else ""
    return _shortened(first, limit - len(more)) + more


def _shortened(first: str, limit: int) -> str:
    if len(first) <= limit:
        return first
    items = first.split(", ")
    # A list of names ("…drafts: A, B, C, D"), not a sentence with commas: its inner items are a word or two.
    if len(items) > 2 and all(len(item.split()) <= 2 for item in items[2:-1] or items[1:]):
        kept = [items[0]]
        for item in items[1:]:
            rest = len(items) - len(kept) - 1
            if len(", ".join([*kept, item])) + len(f" and {rest} more") > limit:
                break
            kept.append(item)
        if len(kept) > 1:
            return ", ".join(kept) + f" and {len(items) - len(kept)} more"
    # A cause of several clauses ends at one ("…; the build step failed"), never in mid-clause
    # (a headline cut inside a quoted command reads as the cause itself; issue 55).
    clause = max(first.rfind("; ", 0, limit - 2), first.rfind(". ", 0, limit - 2))
    if clause > limit // 3:
        return first[: clause + 1].rstrip(";") + " …"
    return cut_at_word(first, limit)


@template_global
def not_evaluated_next(cause: str | None) -> str:
    """What to do when nothing was evaluated: a re-baseline when that is the fix, else the cause."""
    text = (cause or "").lower()
    if "rebaseline: true" in text:  # a lost baseline: the cause names the command
        return (
            "re-baseline: make a new baseline of the base branch with the command the cause above gives "
            "(`rebaseline: true`, or re-run its baseline workflow), then re-run this check."
        )
    if "re-baseline" in text:
        return (
            "re-baseline as the cause above says (its baseline cannot be compared with), then re-run the job."
        )
    return "fix the cause above and push again (or re-run the job)."


# --- a run that answers nothing ----------------------------------------------------------------


@template_global
def failing_why(question: QuestionResult, contexts_seen: bool) -> str:
    """Why a question fails, for a run without a baseline: its error, its leak, its metrics' errors
    or names; "retrieved nothing" first when it got no context while others of the run did (an
    empty retrieval is not an ordinary miss; a target that never returns contexts says nothing)."""
    errors = "; ".join(m.error for m in question.metrics.values() if m.error)
    failed = ", ".join(m.name for m in question.metrics.values() if m.passed is False)
    why = (
        question.error
        or (question.leaks and "routing leak: " + ", ".join(question.leaks))
        or errors
        or failed
    )
    if question.verdict == "fail" and contexts_seen and not question.contexts:
        return "retrieved nothing" + (f" · {why}" if why else "")
    return why


SAME_ANSWER_MIN = 5  # below this many answers, a shared answer proves little


def empty_index_warning(head: RunResult) -> str | None:
    """A target that gave every question the same answer, or refused every in-scope question:
    more likely an empty index or a failed start than a RAG this bad (issue 35)."""
    in_scope = [
        q for q in head.questions if q.answer is not None and q.verdict != "error" and q.expect != "refusal"
    ]
    if len(in_scope) < SAME_ANSWER_MIN:
        return None
    first = " ".join((in_scope[0].answer or "").split())
    if all(
        " ".join((q.answer or "").split()).lower() == first.lower() for q in in_scope
    ):  # stops at the first other answer
        return f"every question got the same answer (“{cut_at_word(first, 80)}”): is the index empty?"
    if all(is_refusal(q.answer or "") for q in in_scope):
        return f"the target refused all {len(in_scope)} in-scope questions: is the index empty?"
    return None


@template_global
def changed_sources_line(cmp: Comparison) -> str:
    """'du2/battery.md (CHARGE, CHARGE-2)': each changed document cited by a question that
    failed before and fails now, with the questions citing it."""
    citing: dict[str, list[str]] = {}
    for change in cmp.source_changed_failing:
        for source in change.source_changed:
            citing.setdefault(source, []).append(change.id)
    return "; ".join(f"{source} ({', '.join(ids)})" for source, ids in citing.items())
