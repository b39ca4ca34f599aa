"""The comment's last misleading and confusing lines (issue 33, Required 5; issue 35 §6): each
test quotes the held-out evidence it fixes and failed on the code before the fix."""

from __future__ import annotations

from dataclasses import replace

from builders import metric, question, run
from rag_ci.core.comparison.acceptance import StaleAcceptance
from rag_ci.core.comparison.budgets import BudgetCheck
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.noise import FlakyQuestion
from rag_ci.core.comparison.policy import policy_changes
from rag_ci.core.reporting.render import Commits, render_html, render_markdown, render_not_evaluated
from rag_ci.core.scoring.results import Context, GatePolicy, Sample

KW, HIT = "keyword_coverage", "hit_at_k"


def _line(md: str, start: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(start))


# --- still misleading ------------------------------------------------------------------------

def test_a_passing_run_with_the_gate_on_never_says_the_gate_is_off():
    base, head = run(question("A")), run(question("A"))
    stale = StaleAcceptance("GONE", None, "r", "no question with this id in the question set", "accepted.yml:1")
    md = render_markdown(head, replace(compare(base, head), stale_accepted=(stale,)))
    assert "gate is off" not in md  # today: "…entries (the gate is off for this run)."
    assert "**Next:**" in md


def test_a_regression_under_fail_on_never_says_the_gate_is_off():
    base = run(question("A", metrics=[metric(HIT, 1.0, 1.0)]))
    head = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]))
    md = render_markdown(head, compare(base, head, fail_on="never"))
    assert "(the gate is off for this run)" in md


def test_a_gain_against_a_re_asked_baseline_is_never_called_one_answer_never_re_asked():
    old = question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)])
    old.samples = [Sample(verdict="fail"), Sample(verdict="pass")]
    old.reasked, old.pass_rate = True, 0.5
    head = run(question("B", metrics=[metric(HIT, 1.0, 1.0)]))
    md = render_markdown(head, compare(run(old), head))
    row = _line(md, "| B |")
    assert "never re-asked" not in row  # today: "possibly noise: the baseline's failure was one answer, never re-asked"
    assert "possibly noise: the baseline passed 1/2 answers" in row


def test_a_gain_against_one_unchecked_baseline_answer_still_says_so():
    head = run(question("B", metrics=[metric(HIT, 1.0, 1.0)]))
    md = render_markdown(head, compare(run(question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)])), head))
    assert "possibly noise: the baseline's failure was one answer, never re-asked" in _line(md, "| B |")


FULL = "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours."
EDITED = "The standard 2 A charger fills an empty PowerPack 400 in 7 hours."


def _charge(qid: str, text: str, fingerprint: str, *, passed: bool):
    q = question(qid, "pass" if passed else "fail", corpora=("du2",), answer="6.5 hours" if passed else "7 hours",
                 metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0 if passed else 0.0, 0.6, kind="answer")])
    q.keywords = ["6.5 hours"]
    q.contexts = [Context(text=text, doc_id="du2", source="du2/battery.md#1")]
    q.source_fingerprints = {"du2/battery.md": fingerprint}
    q.failure_stage = None if passed else "generation"
    return q


def test_a_question_whose_cited_source_changed_is_its_own_stage_with_its_own_next_step():
    base = run(_charge("CHARGE", FULL, "f1", passed=True))
    head = run(_charge("CHARGE", EDITED, "f2", passed=False))
    comparison = compare(base, head)
    [change] = comparison.regressions
    assert change.failure_stage == "source"  # today: "retrieval"
    md = render_markdown(head, comparison)
    assert "### Source changed (1)" in md and "### Retrieval" not in md
    row = _line(md, "| CHARGE |")
    assert "was cut" not in row and "du2/battery.md changed in this PR" in row
    assert "update the reference or the document" in _line(md, "**Next:**")
    assert "source 1" in _line(md, "**Where:**")


def test_a_changed_source_cited_only_by_an_already_failing_question_is_mentioned():
    base = run(_charge("CHARGE", FULL, "f1", passed=False), question("OTHER"))
    head = run(_charge("CHARGE", EDITED, "f2", passed=False), question("OTHER"))
    comparison = compare(base, head)
    assert [c.id for c in comparison.source_changed_failing] == ["CHARGE"]
    md = render_markdown(head, comparison)
    line = _line(md, "ℹ️ Cited documents changed in this PR")
    assert "du2/battery.md" in line and "CHARGE" in line


def test_a_pr_that_sets_the_fake_judge_is_told_main_refuses_it_not_that_it_takes_effect():
    base = run(question("A"), question("B"))
    head = run(question("A"), question("B"))
    changes = policy_changes(GatePolicy(judge={"provider": "none"}), GatePolicy(judge={"provider": "fake", "model": "fake"}))
    md = render_markdown(head, replace(compare(base, head), policy_changes=tuple(changes)))
    assert "takes effect once merged" not in md and "take effect once merged" not in md
    assert "refuse a fake judge" in md
