"""The PR comment a release manager reads in 30 seconds: the kind of failure in the
headline (leaks first), the stage decided from what retrieval returned, one row per question with
its evidence, what to do next, no contradictions and no empty rows."""

from __future__ import annotations

from builders import metric, question, run
from rag_ci.core.comparison.compare import CHUNK_IDS_UNSTABLE, compare, judge_free_regressions
from rag_ci.core.reporting.render import Commits, render_html, render_markdown
from rag_ci.core.results import Context, JudgeFingerprint, MetricResult, Sample

KW, HIT = "keyword_coverage", "hit_at_k"


def _charge(text: str, source: str = "du2/battery.md#1", *, answer: str, keyword: float):
    """DU2-CHARGE-TIME of the example: one chunk retrieved; the keyword "6.5 hours" decides."""
    q = question(
        "DU2-CHARGE-TIME",
        "pass" if keyword >= 0.6 else "fail",
        corpora=("du2",),
        answer=answer,
        metrics=[metric(HIT, 1.0, 1.0), metric(KW, keyword, 0.6, kind="answer")],
    )
    q.keywords = ["PowerPack 400", "6.5 hours"]
    q.contexts = [Context(text=text, doc_id="du2", source=source)]
    # what the run files it under: hit@k passed
    q.failure_stage = "generation" if q.verdict == "fail" else None
    return q


FULL = (
    "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours. Charge only between 0 °C and 40 °C."
)
CUT = "battery sits on the down tube and is locked with a key. Charging The standard 2 A charger fills an empty PowerPack 400 in 6.5"


def test_a_chunk_whose_id_stayed_but_whose_text_was_cut_is_retrieval_with_the_evidence_in_the_visible_row():
    base = run(_charge(FULL, answer="It takes 6.5 hours for the PowerPack 400.", keyword=1.0))
    head = run(_charge(CUT, answer="The 2 A charger fills an empty PowerPack 400 in 6.5", keyword=0.5))
    comparison = compare(base, head)
    [change] = comparison.regressions
    assert change.failure_stage == "retrieval"  # today: "generation" (hit@k passed, the id is the same)
    assert change.retrieval_evidence[0] == "the chunk that held “6.5 hours” (du2/battery.md#1) was cut"
    md = render_markdown(head, comparison)
    row = next(line for line in md.splitlines() if line.startswith("| DU2-CHARGE-TIME |"))
    assert "### Retrieval (1)" in md and "### Generation" not in md
    assert "keyword 0.50" not in row and "keyword 1.00→0.50 (≥ 0.60)" in row
    assert "the chunk that held “6.5 hours” (du2/battery.md\\#1) was cut" in row


def test_regenerated_chunk_ids_leave_a_generation_regression_classed_as_generation_and_are_said_once():
    """An index that mints new chunk ids on every build; a pure prompt regression."""

    def asked(qid, ids, verdict, answer):
        q = question(
            qid,
            verdict,
            answer=answer,
            metrics=[
                metric(HIT, 1.0, 1.0),
                metric(KW, 1.0 if verdict == "pass" else 0.0, 0.6, kind="answer"),
            ],
        )
        q.keywords = ["10 ms"]
        q.contexts = [
            Context(text=f"{qid} chunk {i}: the delay is 10 ms", doc_id="a", source=uuid)
            for i, uuid in enumerate(ids)
        ]
        q.failure_stage = "generation" if verdict == "fail" else None
        return q

    base = run(*(asked(f"Q{n}", [f"old-{n}-{i}" for i in range(4)], "pass", "10 ms") for n in range(3)))
    head = run(
        asked("Q0", [f"new-0-{i}" for i in range(4)], "fail", "I cannot say."),
        *(asked(f"Q{n}", [f"new-{n}-{i}" for i in range(4)], "pass", "10 ms") for n in (1, 2)),
    )
    comparison = compare(base, head)
    [change] = comparison.regressions
    # today: "4 of the top 4 chunks not retrieved"
    assert change.failure_stage == "generation" and change.retrieval_evidence == ()
    assert comparison.notes == (CHUNK_IDS_UNSTABLE,)
    md = render_markdown(head, comparison)
    assert md.count(CHUNK_IDS_UNSTABLE) == 1 and "### Generation (1)" in md


def test_stable_chunk_ids_say_nothing_about_ids():
    base = run(_charge(FULL, answer="6.5 hours", keyword=1.0))
    head = run(_charge(FULL, answer="about 6 hours", keyword=0.5))
    comparison = compare(base, head)
    assert comparison.notes == () and comparison.regressions[0].failure_stage == "generation"


def test_a_failed_retrieval_metric_files_the_question_under_retrieval_even_when_the_answer_failed_too():
    base = run(question("E07", metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0, 0.6, kind="answer")]))
    failing = question("E07", "fail", metrics=[metric(HIT, 0.0, 1.0), metric(KW, 0.0, 0.6, kind="answer")])
    failing.failure_stage = "both"
    comparison = compare(base, run(failing))
    assert comparison.regressions[0].failure_stage == "retrieval"
    md = render_markdown(run(failing), comparison)
    assert "### Retrieval (1)" in md and "Retrieval and generation" not in md
    assert "| E07 | a | hit&#64;k 1→0 · keyword 1.00→0.00 (≥ 0.60) |" in md  # one row, every failing metric


def _leaky(qid, corpus="du2", other="du3", n=2):
    q = question(qid, "routing_error", corpora=(corpus,), leaks=[other])
    q.contexts = [Context(text=f"{qid} own", doc_id=corpus, source=f"{corpus}/a.md#1")] + [
        Context(text=f"{qid} leaked {i}", doc_id=other, source=f"{other}/b.md#{i}") for i in range(n)
    ]
    return q


def _routing_bug():
    """The example's routing regression in small: 3 leaks, 2 regressions, 1 worse."""
    base = run(
        *(question(f"L{i}", corpora=("du2",)) for i in range(3)),
        question("R1", metrics=[metric(HIT, 1.0, 1.0)]),
        question("R2", metrics=[metric(HIT, 1.0, 1.0)]),
        question("W", "fail", metrics=[metric(HIT, 1.0, 1.0), metric(KW, 0.0, 0.6)]),
    )
    head = run(
        *(_leaky(f"L{i}") for i in range(3)),
        question("R1", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        question("R2", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        question("W", "fail", metrics=[metric(HIT, 0.0, 1.0), metric(KW, 0.0, 0.6)]),
    )
    return base, head


def test_the_headline_counts_by_kind_leaks_first_and_the_body_starts_with_the_leaks_in_words():
    base, head = _routing_bug()
    md = render_markdown(head, compare(base, head))
    # today: "❌ 5 regressions, 1 worse"
    assert md.startswith("## rag-ci: ❌ 3 routing leaks · 2 regressions · 1 worse\n")
    assert "**3** routing leaks · **2** regressions · **1** worse · 0 gains — 0/6 questions pass" in md
    assert md.index("### Routing leaks (3)") < md.index("### Retrieval (2)") < md.index("### Worse (1)")
    assert "| L0 | du2 | leaked: 2 contexts from du3 | passed |" in md
    # a leak in words, not `pass → routing_error`
    assert "routing\\_error" not in md.split("### Retrieval")[0]
    assert "**Where:** a 3 · du2 3 — routing 3 · retrieval 3" in md


def test_one_row_per_question_however_many_metrics_crossed():
    base = run(
        *(
            question(f"Q{i}", metrics=[metric(HIT, 1.0, 1.0), metric("mrr", 1.0, 0.5), metric(KW, 1.0, 0.6)])
            for i in range(13)
        )
    )
    head = run(
        *(
            question(
                f"Q{i}",
                "fail",
                metrics=[metric(HIT, 0.0, 1.0), metric("mrr", 0.0, 0.5), metric(KW, 0.0, 0.6)],
            )
            for i in range(13)
        )
    )
    md = render_markdown(head, compare(base, head))
    table = md[md.index("### Retrieval (13)") : md.index("<details>")]
    rows = [line for line in table.splitlines() if line.startswith("| Q")]
    assert len(rows) == 13  # today: 39 rows for 13 regressions
    assert "| Q0 | a | hit&#64;k 1→0 · keyword 1.00→0.00 (≥ 0.60) · MRR 1.00→0.00 (≥ 0.50) |" in rows[0]


def test_each_regression_has_its_accepted_entry_to_paste_and_the_comment_says_what_to_do_next():
    base = run(question("refund", metrics=[metric(HIT, 1.0, 1.0)]))
    head = run(question("refund", "fail", metrics=[metric(HIT, 0.0, 1.0)]))
    md = render_markdown(head, compare(base, head))
    assert "<details><summary>Intended refund? add to accepted.yml:</summary>" in md
    assert '  - id: "refund"\n    question_hash: "hrefund"\n    reason: "…"' in md
    assert "**Next:** fix the regressions, or accept an intended one with a reason" in md


def test_the_commits_compared_open_the_comment():
    base, head = run(question("A"), sha="2" * 40), run(question("A"), sha="3" * 40)
    commits = Commits(
        base_sha="2" * 40,
        base_branch="main",
        base_url="https://github.example/acme/rag/actions/runs/5001",
        head_sha="1" * 40,
        head_url="https://github.example/acme/rag/actions/runs/4242",
    )
    md = render_markdown(head, compare(base, head), commits=commits)
    assert md.splitlines()[2] == (
        "**Compared:** baseline [`2222222`](https://github.example/acme/rag/actions/runs/5001) (main) → "
        "this run [`1111111`](https://github.example/acme/rag/actions/runs/4242)"
    )
    assert "<code>2222222</code> (main)" in render_html(head, compare(base, head), commits=commits)


def test_the_significance_line_is_context_and_is_left_out_when_nothing_flipped():
    same = run(*(question(f"Q{i}") for i in range(5)))
    assert "For context" not in render_markdown(same, compare(same, same))
    base = run(*(question(f"Q{i}", metrics=[metric(HIT, 1.0, 1.0)]) for i in range(5)))
    head = run(question("Q0", "fail", metrics=[metric(HIT, 0.0, 1.0)]), *base.questions[1:])
    md = render_markdown(head, compare(base, head))
    assert (
        "For context: pass rate 100 % → 80 % (1 of 5 questions flipped down, 0 up), could be chance (McNemar p = 1.00)"
        in md
    )
    assert "**Significance:**" not in md


def test_latency_and_cost_deltas_come_from_the_displayed_values_with_one_minus_sign_and_no_empty_rows():
    base = run(question("A", latency=0.0014), question("B", latency=0.0014))
    head = run(question("A", latency=0.00136), question("B", latency=0.00136))
    md = render_markdown(head, compare(base, head))
    assert "| latency p50 | 1.4 ms | 1.4 ms | ±0.0 ms |  |" in md  # today: "1 ms | 1 ms | -0 ms"
    assert "-0" not in md and " -" not in md.split("<details>")[0]
    assert "generator cost" not in md and "judge cost" not in md  # no data: no $0.0000 rows


def test_a_gain_from_a_single_unchecked_baseline_answer_is_marked_as_possibly_noise():
    base = run(
        question("G", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
        question("H", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
    )
    base.questions[1].samples = [Sample(verdict="fail")] * 3  # H's failure was sampled 3 times on main
    base.questions[1].pass_rate = 0.0
    head = run(question("G", metrics=[metric(HIT, 1.0, 1.0)]), question("H", metrics=[metric(HIT, 1.0, 1.0)]))
    comparison = compare(base, head)
    assert [(c.id, c.possibly_noise) for c in comparison.gains] == [("G", True), ("H", False)]
    md = render_markdown(head, comparison)
    assert (
        "| G | a | hit_at_k | fail → pass · possibly noise: the baseline's failure was one answer, never re-asked |"
        in md
    )


def test_a_stale_acceptance_quote_never_swallows_the_counts_line():
    from rag_ci.core.review.accepted import apply_accepted, parse_accepted

    base, head = run(question("A")), run(question("A"))
    entries = parse_accepted('- {id: A, question_hash: "hA", reason: "r"}\n', "accepted.yml")
    md = render_markdown(head, apply_accepted(compare(base, head), entries, {"A": "hA"}))
    lines = md.splitlines()
    counts = next(i for i, line in enumerate(lines) if line.startswith("**0** regressions"))
    # today: no blank line
    assert lines[counts - 1] == "" and lines[counts - 2].startswith("> ⚠️ **Stale acceptances (1)**")


def test_the_fake_judge_label_agrees_with_the_exit_code():
    fake = JudgeFingerprint(
        provider="fake",
        model="rag-ci-fake-judge-1",
        temperature=0,
        deepeval_version="x",
        metrics={},
        prompt_hash="p",
    )
    base = run(question("A", metrics=[metric(HIT, 1.0, 1.0)]))
    head = run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)]), judge=fake)
    md = render_markdown(head, compare(base, head))
    assert "a dry run, not a gate" not in md  # today: said while the run exits 1
    assert "the judge-free metrics are, and they fail this run" in md
    assert "Nothing is compared: there is no baseline." in render_markdown(head)


def test_significance_follows_the_verdicts_when_a_metric_is_left_out_as_not_comparable():
    base = run(question("A", metrics=[metric(HIT, 1.0, 1.0)]), thresholds={HIT: 1.0})
    judged = question(
        "A",
        "fail",
        metrics=[
            metric(HIT, 1.0, 1.0),
            MetricResult(name="faithfulness", kind="judge", score=0.1, threshold=0.7, passed=False),
        ],
    )
    judged.samples = [Sample(verdict="fail", metrics={HIT: True, "faithfulness": False})]
    head = run(judged, thresholds={HIT: 1.0, "faithfulness": 0.7})
    comparison = compare(base, head)
    assert comparison.regressions == () and comparison.passed_n == (1, 1)
    [overall] = [r for r in comparison.significance if r.scope == "overall"]
    assert overall.test.after == 1.0  # today: 0.0, a "significant drop" beside "no regression"


def test_a_broken_run_groups_its_errors_by_cause_and_lists_the_judge_free_regressions_it_measured():
    def broken_judge(qid, hit):
        return question(
            qid,
            "error",
            metrics=[
                metric(HIT, hit, 1.0),
                MetricResult(name="faithfulness", kind="judge", error="judge HTTP 401: invalid api key"),
            ],
        )

    base = run(*(question(f"Q{i}", metrics=[metric(HIT, 1.0, 1.0)]) for i in range(5)))
    head = run(*(broken_judge(f"Q{i}", 0.0 if i == 0 else 1.0) for i in range(5)))
    head.meta.broken = "5/5 questions errored"
    measured = judge_free_regressions(base, head)
    assert [c.id for c in measured] == ["Q0"]
    md = render_markdown(head, None, measured=measured)
    assert "- 5 × judge HTTP 401: invalid api key — check the key" in md
    assert (
        "**Measured all the same (judge-free, not gating: the run is not a result):** 1 regression: Q0" in md
    )
