"""The comment's last misleading and confusing lines: each
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
from rag_ci.core.results import Context, GatePolicy, Sample

KW, HIT = "keyword_coverage", "hit_at_k"


def _line(md: str, start: str) -> str:
    return next(line for line in md.splitlines() if line.startswith(start))


# --- still misleading ------------------------------------------------------------------------


def test_a_passing_run_with_the_gate_on_never_says_the_gate_is_off():
    base, head = run(question("A")), run(question("A"))
    stale = StaleAcceptance(
        "GONE", None, "r", "no question with this id in the question set", "accepted.yml:1"
    )
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
    # today: "possibly noise: the baseline's failure was one answer, never re-asked"
    assert "never re-asked" not in row
    assert "possibly noise: the baseline passed 1/2 answers" in row


def test_a_gain_against_one_unchecked_baseline_answer_still_says_so():
    head = run(question("B", metrics=[metric(HIT, 1.0, 1.0)]))
    md = render_markdown(head, compare(run(question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)])), head))
    assert "possibly noise: the baseline's failure was one answer, never re-asked" in _line(md, "| B |")


FULL = "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours."
EDITED = "The standard 2 A charger fills an empty PowerPack 400 in 7 hours."


def _charge(qid: str, text: str, fingerprint: str, *, passed: bool):
    q = question(
        qid,
        "pass" if passed else "fail",
        corpora=("du2",),
        answer="6.5 hours" if passed else "7 hours",
        metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0 if passed else 0.0, 0.6, kind="answer")],
    )
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
    assert _line(md, "**Where:**") == "**Where:** du2 1 — source changed 1"


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
    changes = policy_changes(
        GatePolicy(judge={"provider": "none"}), GatePolicy(judge={"provider": "fake", "model": "fake"})
    )
    md = render_markdown(head, replace(compare(base, head), policy_changes=tuple(changes)))
    assert "takes effect once merged" not in md and "take effect once merged" not in md
    assert "refuse a fake judge" in md


# --- confusing -------------------------------------------------------------------------------


def test_renamed_questions_are_named_not_only_counted():
    base = run(question("OLD-1"))
    head = run(question("NEW-1"))
    base.questions[0].question_hash = head.questions[0].question_hash = "same"
    comparison = compare(base, head)
    assert comparison.renamed == (("NEW-1", "OLD-1"),)
    md = render_markdown(head, comparison)
    assert "1 renamed (OLD-1 → NEW-1)" in md  # today: "1 renamed"


def test_a_new_question_citing_a_document_that_does_not_exist_is_said():
    new = question("N1")
    new.source_fingerprints = {"du2/missing.md": None}
    head = run(question("A"), new)
    md = render_markdown(head, compare(run(question("A")), head))
    assert "N1 (du2/missing.md)" in md and "no document" in md


def test_metrics_a_new_judge_switches_on_are_not_listed_as_added():
    judge = {"provider": "anthropic", "model": "claude-haiku-4-5-20251001"}
    before = GatePolicy(metrics={"hit_at_k": {"threshold": 1.0, "k": 5}})
    after = GatePolicy(
        metrics={
            "hit_at_k": {"threshold": 1.0, "k": 5},
            "faithfulness": {"threshold": 0.7},
            "answer_relevancy": {"threshold": 0.7},
        },
        judge=judge,
    )
    lines = policy_changes(before, after)
    # today: "answer_relevancy added", "faithfulness added"
    assert not any(line.endswith(" added") for line in lines), lines
    assert any("switched on by the new judge: answer_relevancy, faithfulness" in line for line in lines), (
        lines
    )


def test_a_new_judge_says_which_key_main_needs():
    lines = policy_changes(
        GatePolicy(), GatePolicy(judge={"provider": "anthropic", "model": "claude-haiku-4-5-20251001"})
    )
    assert any("ANTHROPIC_API_KEY" in line for line in lines), lines


def _timed(qid: str, latency: float, cost: float):
    return question(qid, latency=latency, cost=cost, metrics=[metric(HIT, 1.0, 1.0)])


def test_a_big_cost_rise_is_in_the_headline_not_only_in_a_table_and_latency_never():
    base = run(*(_timed(f"Q{i}", 0.100, 0.001) for i in range(10)))
    head = run(*(_timed(f"Q{i}", 0.141, 0.002) for i in range(10)))
    md = render_markdown(head, compare(base, head))
    # "+" is backslashed in markdown (a list marker at a line's start); GitHub shows "+41 %"
    # (tests/integration/test_comment_rendering.py renders it).
    # Latency is not a headline word of a passing run: the load of the machine moves it (issue 55).
    assert md.splitlines()[0] == "## rag-ci: ✅ no regression · cost \\+100 %"


def test_a_latency_within_noise_of_its_budget_is_not_flagged_in_the_other_table():
    base = run(*(_timed(f"Q{i}", 0.100, 0.0) for i in range(10)))
    head = run(*(_timed(f"Q{i}", 0.141, 0.0) for i in range(10)))
    within = BudgetCheck(
        name="latency_p95", limit="+20%", baseline=0.1, value=0.141, allowed=0.12, bound=0.11
    )
    md = render_markdown(head, replace(compare(base, head), budgets=(within,)))
    assert "✅ within noise" in md
    row = _line(md, "| latency p95 |")
    assert "⚠️" not in row and "within noise" in row  # today: ⚠️ here, "✅ within noise" in Budgets
    assert "p95" not in md.splitlines()[0]


def test_flaky_non_gating_questions_are_not_counted_as_failing_without_a_word():
    base = run(question("A"), question("B"))
    head = run(question("A"), question("B", "fail"))
    flaky = FlakyQuestion("B", passed=1, samples=2, baseline_pass_rate=None, why="1/2 answers passed")
    comparison = replace(compare(base, head), regressions=(), flaky=(flaky,))
    md = render_markdown(head, comparison)
    assert "1/2 questions pass (1 more flaky, not gating)" in md  # today: "1/2 questions pass"


def test_the_html_report_names_one_commit_for_this_run():
    head = run(question("A"), sha="b" * 40)
    commits = Commits(base_sha="a" * 40, base_branch="main", head_sha="c" * 40)
    page = render_html(head, compare(run(question("A"), sha="a" * 40), head), commits=commits)
    assert "b" * 7 not in page and "c" * 7 in page  # today: "this run ccccccc" and "commit bbbb…"


def test_a_broken_run_never_opens_with_compared():
    head = run(question("A", "error"), question("B", "error"))
    head.meta.broken = "2/2 questions errored"
    commits = Commits(base_sha="a" * 40, base_branch="main", head_sha="c" * 40)
    md = render_markdown(head, None, commits=commits, notice="It is not compared.")
    assert "**Compared:**" not in md and "aaaaaaa" in md


def test_an_insufficient_acceptance_is_not_told_to_be_removed():
    from rag_ci.core.review.accepted import apply_accepted, parse_accepted

    base = run(question("A", metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0, 0.6, kind="answer")]))
    head = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0), metric(KW, 0.0, 0.6, kind="answer")]))
    entries = parse_accepted(
        '- {id: A, question_hash: "hA", metric: hit_at_k, reason: "intended"}\n', "accepted.yml"
    )
    comparison = apply_accepted(compare(base, head), entries, {"A": "hA"})
    assert [s.why for s in comparison.stale_accepted] == [
        "the question regressed on other metrics than hit_at_k"
    ]
    md = render_markdown(head, comparison)
    # today: "match no regression in this run; remove them" and Next: "remove the stale…"
    assert "remove" not in md.lower()
    assert "accepted.yml:1" in md and "complete the accepted entries" in _line(md, "**Next:**")


def test_a_dead_acceptance_is_still_told_to_be_removed():
    base, head = run(question("A")), run(question("A"))
    dead = StaleAcceptance(
        "GONE", None, "r", "no question with this id in the question set", "accepted.yml:4"
    )
    md = render_markdown(head, replace(compare(base, head), stale_accepted=(dead,)))
    assert "remove" in md


def test_a_not_evaluated_comment_whose_fix_is_re_baselining_says_so():
    cause = (
        "The baseline cannot be compared with this run:\n  - schema_version 0 → 1\n"
        "Re-baseline: make a fresh run on the base branch (`rag-ci run` on main) the new baseline."
    )
    md = render_not_evaluated(cause)
    next_line = _line(md, "**Next:**")
    assert "push again" not in next_line and "re-baseline" in next_line.lower()


def test_a_long_not_evaluated_headline_is_cut_between_ids_and_says_how_many_more():
    ids = ", ".join(f"DRAFT-{i:02d}" for i in range(1, 15))
    cause = (
        f"questions.yml: 14 questions are drafts, not reviewed yet (status: draft): {ids}. Review them first."
    )
    headline = render_not_evaluated(cause).splitlines()[0]
    assert len(headline) < 200
    last = headline.rsplit("DRAFT-", 1)[1]
    assert last[:2].isdigit() and ("more" in headline), headline  # today: cut mid-id, "DRAFT-1…"


def test_an_absolute_temp_path_never_reaches_a_headline():
    cause = "/tmp/tmpk3j2x9/checkout/rag-ci.yml: line 3: unknown field `gate.fial_on`"
    md = render_not_evaluated(cause)
    assert "/tmp/" not in md.splitlines()[0] and "rag-ci.yml: line 3" in md.splitlines()[0]
    assert "/tmp/tmpk3j2x9/checkout/rag-ci.yml" in md  # the cause itself, quoted below, keeps it


def test_accepted_regressions_are_in_a_failing_headline_too():
    from rag_ci.core.review.accepted import apply_accepted, parse_accepted

    base = run(question("A", metrics=[metric(HIT, 1.0, 1.0)]), question("B", metrics=[metric(HIT, 1.0, 1.0)]))
    head = run(
        question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
    )
    entries = parse_accepted('- {id: A, question_hash: "hA", reason: "intended"}\n', "accepted.yml")
    md = render_markdown(head, apply_accepted(compare(base, head), entries, {"A": "hA", "B": "hB"}))
    assert md.splitlines()[0] == "## rag-ci: ❌ 1 regression · 1 accepted"


def test_a_judge_cost_of_nothing_on_both_sides_has_no_row():
    from rag_ci.core.results import JudgeFingerprint

    judge = JudgeFingerprint(
        provider="openai",
        model="gpt-4.1-mini-2025-04-14",
        temperature=0,
        deepeval_version="x",
        metrics={},
        prompt_hash="p",
    )
    base, head = run(question("A"), judge=judge), run(question("A"), judge=judge)
    md = render_markdown(head, compare(base, head))
    assert "judge cost" not in md.split("<sub>")[0]  # today: "| judge cost | $0.0000 | $0.0000 | ±$0.0000 |"


def test_a_cost_limit_is_printed_in_dollars():
    base = run(*(_timed(f"Q{i}", 0.1, 0.001) for i in range(3)))
    head = run(*(_timed(f"Q{i}", 0.1, 0.001) for i in range(3)))
    check = BudgetCheck(
        name="cost_per_question_usd", limit="0.002", baseline=0.001, value=0.001, allowed=0.002
    )
    md = render_markdown(head, replace(compare(base, head), budgets=(check,)))
    assert "| cost_per_question_usd | $0.002 |" in md  # today: "| 0.002 |"


def test_a_grouped_error_cause_is_never_cut_inside_a_url():
    from rag_ci.core.scoring.verdict import error_causes

    url = "https://api.example.com/v1/projects/very-long-project-name/locations/europe-west4/endpoints/123456:predict"
    error = (
        "judge HTTP 404 from the provider while scoring faithfulness for this question; see "
        + url
        + " for details"
    )
    [(n, cause, _)] = error_causes([question(f"Q{i}", "error", error=error) for i in range(2)])
    assert n == 2 and len(cause) <= 161
    assert url in cause or "https://" not in cause, cause  # today: cut at 160 characters, mid-URL


def test_a_run_from_a_checkout_with_uncommitted_changes_is_not_shown_as_the_commit():
    head = run(question("A"), sha="c" * 40)
    head.meta.git_dirty = True
    md = render_markdown(
        head, compare(run(question("A")), head), commits=Commits.of_runs(run(question("A")), head)
    )
    assert "`ccccccc` + uncommitted changes" in _line(md, "**Compared:**")


# --- what the report says of an empty retrieval and an empty index ---------------------------


def test_an_answer_with_no_contexts_says_retrieved_nothing():
    old = question("A", metrics=[metric(HIT, 1.0, 1.0)])
    old.contexts = [Context(text="the delay is 10 ms", doc_id="a", source="a/evt.md#1")]
    new = question("A", "fail", answer="I do not know.", metrics=[metric(HIT, 0.0, 1.0)])
    md = render_markdown(run(new), compare(run(old), run(new)))
    # today: "1 chunk of the baseline no longer retrieved (a/evt.md#1)"
    assert "retrieved nothing" in _line(md, "| A |")


def test_a_target_answering_the_same_text_to_every_question_asks_whether_the_index_is_empty():
    head = run(*(question(f"Q{i}", "fail", answer="No information found.") for i in range(6)))
    md = render_markdown(head, notice="bootstrap: no baseline")
    assert "is the index empty?" in md
    varied = run(*(question(f"Q{i}", answer=f"answer {i}") for i in range(6)))
    assert "is the index empty?" not in render_markdown(varied, notice="bootstrap: no baseline")


def test_an_annotation_for_a_question_that_now_errors_says_the_error_once():
    from rag_ci.core.reporting.annotations import cause_line

    error = "target exited with code 1: ModuleNotFoundError: No module named 'faiss'"
    base = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]))
    head = run(question("A", "error", error=error))
    [change] = compare(base, head).worse
    text = cause_line(change)
    assert text.count("No module named") == 1, text  # today: in "(now errors: …)" and again after "—"


def test_escaped_text_is_cut_between_words_never_inside_one():
    from rag_ci.core.reporting.render import escape_md

    out = escape_md("see https://example.com/a/very/long/path/that/must/not/be/cut " + "word " * 40, limit=50)
    assert out.endswith("…") and "https://example.com/a/very/long" not in out.replace(
        "`https://example.com/a/very/long/path/that/must/not/be/cut`", ""
    )
    assert escape_md("alpha beta gamma delta", limit=15) == "alpha beta…"  # today: "alpha beta gam…"


def test_without_a_baseline_a_failing_question_with_no_contexts_says_retrieved_nothing():
    hit = question("HIT", metrics=[metric(HIT, 1.0, 1.0)])
    hit.contexts = [Context(text="the delay is 10 ms", doc_id="a", source="a/evt.md#1")]
    empty = question("EMPTY", "fail", metrics=[metric(HIT, 0.0, 1.0)])
    md = render_markdown(run(hit, empty), notice="bootstrap: no baseline")
    # today: "| fail | hit_at_k |"
    assert _line(md, "| EMPTY |").endswith("| fail | retrieved nothing · hit_at_k |")
    # a target without contexts
    never = run(question("Q1", "fail", metrics=[metric(HIT, 0.0, 1.0)]), question("Q2"))
    assert "retrieved nothing" not in render_markdown(never, notice="bootstrap: no baseline")


def test_a_not_evaluated_headline_for_14_draft_errors_names_the_first_whole_and_counts_the_rest():
    cause = "\n".join(
        f"/tmp/tmpabc123/eval/questions.yml:{1 + 6 * i}: DRAFT-{i:02d}: a draft (write the reference, check "
        "doc_id and sources, then remove `status: draft`)"
        for i in range(1, 15)
    )
    headline = render_not_evaluated(cause).splitlines()[0]
    assert headline.startswith("## rag-ci: ⛔ not evaluated — questions.yml:7: DRAFT-01: a draft"), headline
    assert headline.endswith("(and 13 more like it)") and len(headline) < 200, headline


def test_a_target_refusing_every_in_scope_question_asks_whether_the_index_is_empty():
    refusals = [f"I could not find anything about topic {i} in the documents." for i in range(5)]
    head = run(*(question(f"Q{i}", "fail", answer=text) for i, text in enumerate(refusals)))
    assert "the target refused all 5 in-scope questions: is the index empty?" in render_markdown(
        head, notice="bootstrap"
    )


def test_a_regression_under_significant_drop_is_never_called_gate_disabled():
    base = run(*(question(f"Q{i}", metrics=[metric(HIT, 1.0, 1.0)]) for i in range(10)))
    head = run(
        question("Q0", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        *(question(f"Q{i}", metrics=[metric(HIT, 1.0, 1.0)]) for i in range(1, 10)),
    )
    md = render_markdown(head, compare(base, head, fail_on="significant_drop"))
    # today: "⚠️ 1 regression (gate disabled)"
    assert "gate disabled" not in md.splitlines()[0] and "gate is off" not in md
    assert (
        md.splitlines()[0]
        == "## rag-ci: ⚠️ 1 regression (not a significant drop: the gate is significant_drop)"
    )
    never = render_markdown(head, compare(base, head, fail_on="never"))
    assert never.splitlines()[0] == "## rag-ci: ⚠️ 1 regression (gate disabled)"


def test_a_new_judge_is_previewed_as_what_it_is_not_as_every_default_setting():
    lines = policy_changes(
        GatePolicy(),
        GatePolicy(
            judge={
                "provider": "anthropic",
                "model": "claude-haiku-4-5-20251001",
                "base_url": "https://proxy.example/v1",
            }
        ),
    )
    assert [line.split(" ", 1)[0] for line in lines] == ["judge.base_url", "judge.model", "judge.provider"], (
        lines
    )


def test_a_gain_against_a_failure_every_re_ask_reproduced_is_not_possibly_noise():
    old = question("B", "fail", metrics=[metric(HIT, 0.0, 1.0)])
    old.samples = [Sample(verdict="fail"), Sample(verdict="fail"), Sample(verdict="fail")]
    old.reasked, old.pass_rate = True, 0.0
    [gain] = compare(run(old), run(question("B", metrics=[metric(HIT, 1.0, 1.0)]))).gains
    # today: "possibly noise: the baseline's failure was one answer, never re-asked"
    assert not gain.possibly_noise


def test_a_worse_question_whose_source_changed_says_so_in_its_row_not_that_a_chunk_was_cut():
    old = _charge("CHARGE", FULL, "f1", passed=False)
    old.metrics[HIT] = metric(HIT, 1.0, 1.0)
    new = _charge("CHARGE", EDITED, "f2", passed=False)
    new.metrics[HIT] = metric(HIT, 0.0, 1.0)
    comparison = compare(run(old), run(new))
    [worse] = comparison.worse
    md = render_markdown(run(new), comparison)
    row = _line(md, "| CHARGE")
    assert "du2/battery.md changed in this PR: the reference may be stale" in row and "was cut" not in row


def test_a_broken_run_says_its_error_once():
    from rag_ci.core.scoring.verdict import broken_run_reason

    error = "target exited with code 1; its stderr: ModuleNotFoundError: No module named 'faiss'"
    head = run(*(question(f"Q{i}", "error", error=error) for i in range(5)))
    head.meta.broken = broken_run_reason(head.questions, 0.2)
    md = render_markdown(head, None, notice="It is not compared.")
    # today: in "This run is not a result: … most common error" and under "Errors by cause"
    assert md.split("<details>")[0].count("No module named") == 1, md
    assert "5/5 questions errored" in md
