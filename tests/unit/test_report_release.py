"""What a release manager decides from: before/after, the stage from all retrieval evidence,
units and labels, accepted regressions, the trend."""

import re

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.history import history_line, trend_summary
from rag_ci.core.reporting.render import render_html, render_markdown, score_delta_chart, word_diff
from rag_ci.core.results import Context, RunResult
from rag_ci.core.review.accepted import apply_accepted, in_force, parse_accepted
from rag_ci.errors import ValidationError


def _bm25_pair():
    """A tokenizer change: the expected source drops from rank 1 to rank 2 (MRR 1.0 → 0.5),
    hit@k still passes, and the answer, built from the wrong chunk, fails."""
    base_q = question(
        "refund",
        metrics=[
            metric("hit_at_k", 1.0, 1.0),
            metric("mrr", 1.0, 0.5),
            metric("keyword_coverage", 1.0, 0.5, kind="answer"),
        ],
        answer="Refunds are accepted within 30 days of delivery.",
    )
    base_q.contexts = [Context(text="a", doc_id="refunds.md"), Context(text="b", doc_id="shipping.md")]
    head_q = question(
        "refund",
        "fail",
        metrics=[
            metric("hit_at_k", 1.0, 1.0),
            metric("mrr", 0.5, 0.5),
            metric("keyword_coverage", 0.0, 0.5, kind="answer"),
        ],
        answer="Shipping takes <script>alert(1)</script> 5 days @everyone.",
    )
    head_q.failure_stage = "generation"  # what the run itself files it under: hit@k passed
    head_q.contexts = [Context(text="b", doc_id="shipping.md"), Context(text="a", doc_id="refunds.md")]
    return run(base_q), run(head_q)


def test_a_drop_in_mrr_with_hit_at_k_still_passing_is_filed_under_retrieval():
    base, head = _bm25_pair()
    comparison = compare(base, head)
    [change] = comparison.regressions
    assert change.failure_stage == "retrieval" and change.retrieval_evidence == ("mrr 1.00 → 0.50",)
    md = render_markdown(head, comparison)
    assert "### Generation" not in md and "### Retrieval (1)" in md
    # the evidence is in the visible row
    assert "| refund | a | keyword 1.00→0.00 (≥ 0.50) | mrr 1.00 → 0.50 |" in md
    assert "retrieval not what it was: mrr 1.00 → 0.50" in md


def test_a_generation_failure_without_retrieval_evidence_stays_generation():
    base, head = _bm25_pair()
    head.questions[0].metrics["mrr"].score = 1.0
    head.questions[0].contexts = base.questions[0].contexts
    [change] = compare(base, head).regressions
    assert change.failure_stage == "generation" and change.retrieval_evidence == ()


def test_chunks_the_baseline_never_retrieved_point_at_retrieval():
    base, head = _bm25_pair()
    head.questions[0].metrics["mrr"].score = 1.0
    head.questions[0].contexts = [
        Context(text="new", doc_id="a", source="refunds.md#7"),
        base.questions[0].contexts[1],
    ]
    [change] = compare(base, head).regressions
    assert change.failure_stage == "retrieval"
    assert change.retrieval_evidence == (
        "1 chunk of the baseline no longer retrieved (refunds.md)",
        "1 of the top 2 chunks not retrieved on the baseline",
    )


def test_before_and_after_shows_both_answers_with_changed_words_marked_escaped_and_sources_by_rank():
    base, head = _bm25_pair()
    comparison = compare(base, head)
    md = render_markdown(head, comparison)
    block = md[md.index("<details><summary>Before and after") :]
    block = block[: block.index("</details>")]
    assert "- baseline: ~~Refunds are accepted within 30~~ days ~~of delivery.~~" in block
    assert (
        "- this run: **Shipping takes &lt;script&gt;alert(1)&lt;/script&gt; 5** days **&#64;everyone.**"
        in block
    )
    assert "<script>" not in md and "@everyone" not in md
    assert "| 1 | refunds.md | shipping.md |" in block and "| 2 | shipping.md | refunds.md |" in block
    html = render_html(head, comparison)
    assert "<del>Refunds are accepted within 30</del> days <del>of delivery.</del>" in html
    assert (
        "<ins>Shipping takes &lt;script&gt;alert(1)&lt;/script&gt; 5</ins> days <ins>@everyone.</ins>" in html
    )
    assert "<script>" not in html


def test_word_diff_marks_only_the_words_that_changed():
    old, new = word_diff("the window is 30 days from delivery", "the window is 14 days from purchase")
    assert old == [("the window is", False), ("30", True), ("days from", False), ("delivery", True)]
    assert new == [("the window is", False), ("14", True), ("days from", False), ("purchase", True)]


def test_deltas_carry_their_units_ms_dollars_and_percentage_points():
    base = run(question("A", latency=0.200, cost=0.0100), question("B", latency=0.200, cost=0.0100))
    head = run(
        question("A", latency=0.164, cost=0.0125),
        question("B", "fail", latency=0.164, cost=0.0125, metrics=[metric("hit_at_k", 0.0, 1.0)]),
    )
    md = render_markdown(head, compare(base, head))
    # one minus sign; under ±20 %: not flagged
    assert "| latency p50 | 200 ms | 164 ms | −36 ms (−18 %) |  |" in md
    assert "| generator cost | $0.0200 | $0.0250 | \\+$0.0050 (\\+25 %) | ⚠️ |" in md  # beyond ±20 %: flagged
    assert "judge cost" not in md  # a judge-free run has no judge cost row
    assert "| corpus a | 100% | 50% | −50.0 pp |" in md
    html = render_html(head, compare(base, head))
    assert "−36 ms" in html and "+$0.0050" in html and " s<" not in html


def test_unscored_questions_are_counted_beside_the_mean():
    base = run(
        question("A", metrics=[metric("keyword_coverage", 0.5, 0.5, kind="answer")]),
        question("B", metrics=[metric("keyword_coverage", 0.5, 0.5, kind="answer")]),
    )
    head = run(
        question("A", metrics=[metric("keyword_coverage", 1.0, 0.5, kind="answer")]),
        question("B", "routing_error", leaks=["other"]),
    )
    md = render_markdown(head, compare(base, head))
    assert "| keyword_coverage | 0.500 | 1.000 | +0.500 | 2/2 → 1/2 |" in md


def test_answer_checks_are_answer_metrics_and_old_results_storing_retrieval_still_load():
    from rag_ci.core.config import MetricConfig
    from rag_ci.core.questionset.questions import Question
    from rag_ci.core.scoring.retrieval_metrics import score_retrieval

    q = Question(id="A", question="q", doc_id=["a"], sources=["x.md"], keywords=["30 days"])
    scored = score_retrieval(
        q,
        "30 days",
        [Context(text="t", doc_id="y.md")],
        {
            "hit_at_k": MetricConfig(threshold=1.0),
            "keyword_coverage": MetricConfig(threshold=0.5),
            "refusal": MetricConfig(threshold=1.0),
        },
    )
    assert {n: m.kind for n, m in scored.items()} == {
        "hit_at_k": "retrieval",
        "keyword_coverage": "answer",
        "refusal": "answer",
    }
    assert (
        "rank none" not in scored["hit_at_k"].reason
        and "none of the 1 expected sources" in scored["hit_at_k"].reason
    )
    old = run(question("A", metrics=[metric("keyword_coverage", 1.0, 0.5, kind="retrieval")]))
    assert (
        RunResult.model_validate_json(old.model_dump_json()).questions[0].metrics["keyword_coverage"].kind
        == "retrieval"
    )


def test_the_chart_has_one_red_bar_per_question_failing_the_gate_a_routing_leak_included_and_a_latency_axis():
    base = run(
        question("reg", metrics=[metric("hit_at_k", 1.0, 1.0)]),
        question("leak"),
        question("edited", metrics=[metric("hit_at_k", 1.0, 1.0)]),
        question("gain", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]),
    )
    edited = question("edited", "fail", hash_="new", metrics=[metric("hit_at_k", 0.0, 1.0)])
    head = run(
        question("reg", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]),
        question("leak", "routing_error", leaks=["b"]),
        edited,
        question("gain", metrics=[metric("hit_at_k", 1.0, 1.0)]),
    )
    comparison = compare(base, head)
    assert len(comparison.gating) == 2
    svg = score_delta_chart(comparison, head)
    assert svg.count('fill="#cf222e"') == 2 and svg.count('fill="#2da44e"') == 1
    assert (
        "<title>leak: routing leak" in svg
        and "<title>reg: fails the gate" in svg
        and "<title>edited: fails" not in svg
    )
    assert ">latency<" in svg and ">100 ms<" in svg and ">0 ms<" in svg  # every tick labelled with its unit
    html = render_html(head, comparison)
    assert "Gains (1)" in html
    no_gains = render_html(
        head, compare(base, run(*[q for q in head.questions if q.id != "gain"], base.questions[3]))
    )
    assert "Gains (" not in no_gains


# --- accepted regressions ----------------------------------------------------------------------


def _regressions():
    base = run(
        question(
            "A", metrics=[metric("faithfulness", 0.9, kind="judge"), metric("correctness", 0.9, kind="judge")]
        ),
        question("B", metrics=[metric("hit_at_k", 1.0, 1.0)]),
        question("C"),
    )
    head = run(
        question(
            "A",
            "fail",
            metrics=[metric("faithfulness", 0.1, kind="judge"), metric("correctness", 0.1, kind="judge")],
        ),
        question("B", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]),
        question("C", "routing_error", leaks=["b"]),
    )
    return base, head


def _hashes(head):
    return {q.id: q.question_hash for q in head.questions}


def test_an_accepted_regression_passes_the_gate_and_opens_the_comment_with_its_reason():
    base, head = _regressions()
    entries = parse_accepted(
        "accepted:\n  - id: A\n    question_hash: hA\n    reason: Policy changed on purpose, see @legal <b>\n"
        '  - id: B\n    question_hash: hB\n    reason: "New chunker; tracked in #12"\n',
        "accepted.yml",
    )
    comparison = apply_accepted(compare(base, head), entries, _hashes(head))
    assert [a.change.id for a in comparison.accepted] == ["A", "B"] and [
        c.id for c in comparison.regressions
    ] == ["C"]
    assert comparison.verdict == "fail"  # the routing leak on C is never accepted
    md = render_markdown(head, comparison)
    assert md.index("### ✋ Accepted regressions (2)") < md.index("### Routing leaks (1)")
    assert (
        "| A | correctness, faithfulness | Policy changed on purpose, see &#64;legal &lt;b&gt; | accepted.yml:2 |"
        in md
    )
    # the whole reason, and its file
    assert "| B | hit_at_k | New chunker; tracked in \\#12 | accepted.yml:5 |" in md
    assert "<b>" not in md


def test_a_metric_entry_accepts_only_that_metric_and_the_rest_still_gates():
    base, head = _regressions()
    entries = parse_accepted(
        "- {id: A, question_hash: hA, metric: faithfulness, reason: judged stricter}\n", "accepted.yml"
    )
    comparison = apply_accepted(compare(base, head), entries, _hashes(head))
    assert [c.id for c in comparison.regressions] == ["A", "B", "C"] and comparison.accepted == ()
    [stale] = comparison.stale_accepted
    assert stale.id == "A" and "other metrics than faithfulness" in stale.why


def test_an_entry_lapses_when_the_question_changes_and_one_that_matches_nothing_is_stale():
    base, head = _regressions()
    head.questions[0].question_hash = "edited-A"  # the PR edited A: the entry names its old hash
    entries = parse_accepted(
        "- {id: A, question_hash: hA, reason: r}\n- {id: Z, question_hash: hZ, reason: gone}\n"
        "- {id: C, question_hash: hC, reason: leak}\n",
        "accepted.yml",
    )
    comparison = apply_accepted(compare(base, head), entries, _hashes(head), baseline_hashes=_hashes(base))
    whys = {s.id: s.why for s in comparison.stale_accepted}
    assert whys["A"] == "the question changed since it was accepted (question_hash hA, now edited-A)"
    assert (
        whys["Z"] == "no question with this id in the question set"
        and whys["C"] == "a routing leak is never accepted"
    )
    md = render_markdown(head, comparison)
    assert "**Stale acceptances (3)**" in md
    assert in_force(entries, _hashes(head)) == [{"id": "C", "metric": None, "reason": "leak"}]


def test_a_bad_accepted_file_names_file_and_line():
    with pytest.raises(ValidationError) as err:
        parse_accepted(
            "accepted:\n  - id: A\n    reason: r\n  - id: B\n    question_hash: h\n    reasn: typo\n",
            "q/accepted.yml",
        )
    assert "q/accepted.yml:2: missing question_hash" in str(err.value)
    assert "q/accepted.yml:4: unknown key(s) reasn" in str(err.value)


def test_the_history_line_records_the_acceptances_in_force_and_each_corpus():
    base, head = _regressions()
    line = history_line(head, accepted=[{"id": "A", "metric": None, "reason": "r"}])
    assert line["accepted"] == [{"id": "A", "metric": None, "reason": "r"}] and line["corpora"] == {"a": 0.0}


# --- trend ---------------------------------------------------------------------------------------


def _entries(n=12):
    return [
        {
            "timestamp": f"2026-01-{i + 1:02d}T00:00:00",
            "git_sha": f"{i:07d}",
            "pass_rate": 0.5 + i * 0.04,
            "metrics": {"hit_at_k": 0.6 + i * 0.02},
            "latency_p95_s": 0.1 + i * 0.01,
            "generator_cost_usd": 0.01,
            "judge_cost_usd": 0.0,
            "question_set_hash": "qs",
            "judge_digest": None,
            "corpora": {"billing": 0.5, "<x>": 0.9},
        }
        for i in range(n)
    ]


def test_the_comment_shows_the_last_10_runs_of_main_as_one_compact_line():
    head = run(question("A"))
    md = render_markdown(head, compare(run(question("A")), head), trend=trend_summary(_entries()))
    [line] = [ln for ln in md.splitlines() if ln.startswith("**Trend on main**")]
    assert "(last 10 runs since 2026-01-03)" in line
    assert re.search(r"pass rate [▁▂▃▄▅▆▇█]{10} 58% → 94%", line)
    assert (
        "hit_at_k 0.64 → 0.82" in line and "p95 120 ms → 210 ms" in line and "cost $0.0100 → $0.0100" in line
    )


def test_the_html_report_charts_the_trend_overall_and_per_corpus_escaped():
    html = render_html(run(question("A")), history=_entries())
    for title in (
        "pass rate",
        "mean hit_at_k",
        "latency p95 (ms)",
        "cost per run ($)",
        "pass rate, corpus billing",
        "pass rate, corpus &lt;x&gt;",
    ):
        assert f">{title}</text>" in html, title
    assert "<x>" not in html


def test_moving_the_accepted_file_is_previewed_as_a_gate_change_but_never_pinned_to_the_baseline():
    from rag_ci.core.comparison.policy import pin_to_baseline, policy_of
    from rag_ci.core.config import Config

    config = Config.model_validate(
        {"target": {"kind": "http", "url": "http://127.0.0.1:1"}, "gate": {"accepted": "mine.yml"}}
    )
    for recorded in (
        None,
        policy_of(Config.model_validate({"target": {"kind": "http", "url": "http://127.0.0.1:1"}})),
    ):
        meta = run(question("A"), thresholds={"hit_at_k": 1.0}, policy=recorded).meta
        pinned = pin_to_baseline(config, meta)
        [change] = [c for c in pinned.changes if "accepted" in c]
        assert change.startswith("gate.accepted accepted.yml → mine.yml (the file that accepts regressions")
        assert pinned.config.gate.accepted == "mine.yml"  # the PR's own file applies, on purpose


def test_a_12_character_question_hash_prefix_accepts_and_a_mistyped_hash_says_so_without_two_identical_hashes():
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]))
    head = run(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]))
    full = "3f2a9c0d1e7b5a11"
    head.questions[0].question_hash = base.questions[0].question_hash = full
    prefix = parse_accepted(
        f'- {{id: A, question_hash: "{full[:12]}", reason: "docs length"}}\n', "accepted.yml"
    )
    # today: stale
    assert [a.change.id for a in apply_accepted(compare(base, head), prefix, {"A": full}).accepted] == ["A"]
    typo = parse_accepted('- {id: A, question_hash: "3f2a9c0d1e7c", reason: "typo"}\n', "accepted.yml")
    [stale] = apply_accepted(
        compare(base, head), typo, {"A": full}, baseline_hashes={"A": full}
    ).stale_accepted
    assert (
        stale.why
        == f"its question_hash 3f2a9c0d1e7c is not this question's ({full}): mistyped, or copied from another question?"
    )
    assert stale.where == "accepted.yml:1"
    short = parse_accepted('- {id: A, question_hash: "3f2a9c", reason: "too short"}\n', "accepted.yml")
    # under 12 characters: no prefix match
    assert apply_accepted(compare(base, head), short, {"A": full}).accepted == ()


def test_an_unquoted_all_digit_question_hash_is_read_as_written_and_an_unquoted_reason_cut_at_a_hash_sign_is_refused():
    [entry] = parse_accepted(
        "accepted:\n  - id: A\n    question_hash: 000000000000\n    reason: r\n", "accepted.yml"
    )
    assert entry.question_hash == "000000000000"  # today: YAML's 0, "missing question_hash"
    [entry] = parse_accepted(
        "accepted:\n  - id: A\n    question_hash: 1234e56789012345\n    reason: r\n", "accepted.yml"
    )
    assert entry.question_hash == "1234e56789012345"  # today: "inf"
    with pytest.raises(ValidationError) as err:
        parse_accepted("accepted:\n  - id: A\n    question_hash: h\n    reason: see #231\n", "accepted.yml")
    # today: accepted with the reason "see"
    assert "accepted.yml:4: the reason is cut at ' #'" in str(err.value)
    [entry] = parse_accepted(
        'accepted:\n  - id: A\n    question_hash: h\n    reason: "see #231"  # a comment\n', "accepted.yml"
    )
    assert entry.reason == "see #231"
