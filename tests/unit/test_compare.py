"""Compare semantics: regressions, gains, changed, new, removed, crossings, incompatibility."""

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.results import GatePolicy, JudgeFingerprint
from rag_ci.errors import IncompatibleBaseline


def test_pass_to_fail_is_a_regression_with_the_metric_that_crossed():
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), question("B"))
    head = run(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), question("B"))
    result = compare(base, head)
    assert result.verdict == "fail"
    (reg,) = result.regressions
    assert reg.id == "A" and [(m.name, m.old, m.new) for m in reg.metrics] == [("hit_at_k", 1.0, 0.0)]
    assert reg.reason == "hit_at_k: hit_at_k=0.0" and reg.metrics[0].reason == "hit_at_k=0.0"


def test_pass_to_error_and_routing_error_are_regressions():
    base = run(question("A"), question("B"))
    head = run(question("A", "error"), question("B", "routing_error"))
    assert [c.id for c in compare(base, head).regressions] == ["A", "B"]


def test_fail_to_pass_is_a_gain_and_passes_the_gate():
    base = run(question("A", "fail", metrics=[metric("mrr", 0.2)]))
    head = run(question("A", metrics=[metric("mrr", 0.9)]))
    result = compare(base, head)
    assert result.verdict == "pass" and [c.id for c in result.gains] == ["A"]
    assert result.gains[0].metrics[0].crossed_up


def test_changed_question_is_reported_not_a_regression():
    base = run(question("A", hash_="old"))
    head = run(question("A", "fail", hash_="new"))
    result = compare(base, head)
    assert result.regressions == () and [c.id for c in result.changed] == ["A"] and result.verdict == "pass"


def test_new_and_removed_questions():
    result = compare(run(question("A"), question("GONE")), run(question("A"), question("NEW", "fail")))
    assert [c.id for c in result.new] == ["NEW"] and [c.id for c in result.removed] == ["GONE"]
    assert result.verdict == "pass"


def test_a_still_failing_question_that_lost_a_passing_metric_is_worse_not_a_regression():
    base = run(question("A", "fail", metrics=[metric("mrr", 0.6), metric("kw", 0.1)]))
    head = run(question("A", "fail", metrics=[metric("mrr", 0.2), metric("kw", 0.1)]))
    result = compare(base, head)
    assert result.regressions == () and [c.id for c in result.worse] == ["A"]


def test_latency_and_cost_deltas():
    base = run(question("A", latency=0.1, cost=0.01), question("B", latency=0.2, cost=0.01))
    head = run(question("A", latency=0.5, cost=0.02), question("B", latency=0.2, cost=0.01))
    result = compare(base, head)
    assert result.generator_cost_usd.change == pytest.approx(0.01)
    assert result.latency_p95_s.new > result.latency_p95_s.old
    assert result.largest_latency_changes[0].id == "A"
    assert result.largest_latency_changes[0].latency_delta_s == pytest.approx(0.4)


def test_fail_on_never_reports_but_passes():
    result = compare(run(question("A")), run(question("A", "fail")), fail_on="never")
    assert len(result.regressions) == 1 and result.verdict == "pass"


def test_a_changed_threshold_leaves_that_metric_out_and_the_others_still_gate():
    base = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.9, 0.6)]),
        question("B", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.7, 0.6)]),
        thresholds={"hit_at_k": 1.0, "keyword_coverage": 0.6},
    )
    head = run(
        question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0), metric("keyword_coverage", 0.9, 0.8)]),
        question("B", "fail", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.7, 0.8)]),
        thresholds={"hit_at_k": 1.0, "keyword_coverage": 0.8},
    )
    result = compare(base, head)
    [left_out] = result.not_comparable
    assert left_out.name == "keyword_coverage" and left_out.differences == ("threshold: 0.6 → 0.8",)
    # A lost hit_at_k (comparable): a regression. B failed only the re-defined keyword_coverage: not one.
    assert [c.id for c in result.regressions] == ["A"] and result.verdict == "fail"
    assert "keyword_coverage" not in result.metric_means


def policy(**metrics):
    return GatePolicy(gate={"fail_on": "any_regression"}, metrics=metrics, judge={"provider": "none"})


def test_a_changed_k_is_detected_and_only_that_metric_is_not_comparable():
    base_policy = policy(
        hit_at_k={"threshold": 1.0, "k": 5, "criteria": None},
        keyword_coverage={"threshold": 0.6, "k": None, "criteria": None},
    )
    head_policy = policy(
        hit_at_k={"threshold": 1.0, "k": 3, "criteria": None},
        keyword_coverage={"threshold": 0.6, "k": None, "criteria": None},
    )
    base = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.9, 0.6)]),
        question("B", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.9, 0.6)]),
        policy=base_policy,
    )
    head = run(
        question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0), metric("keyword_coverage", 0.9, 0.6)]),
        question("B", "fail", metrics=[metric("hit_at_k", 1.0, 1.0), metric("keyword_coverage", 0.1, 0.6)]),
        policy=head_policy,
    )
    result = compare(base, head)
    assert [(n.name, n.differences) for n in result.not_comparable] == [("hit_at_k", ("k: 5 → 3",))]
    # keyword_coverage still gates; A's hit@3 miss does not
    assert [c.id for c in result.regressions] == ["B"]
    assert result.to_dict()["not_comparable"][0]["old"]["k"] == 5


def test_a_metric_added_since_the_baseline_is_not_comparable_not_a_reason_to_refuse():
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), thresholds={"hit_at_k": 1.0})
    head = run(
        question("A", "fail", metrics=[metric("hit_at_k", 1.0, 1.0), metric("mrr", 0.2, 0.5)]),
        thresholds={"hit_at_k": 1.0, "mrr": 0.5},
    )
    result = compare(base, head)
    assert [(n.name, n.old, n.differences) for n in result.not_comparable] == [
        ("mrr", None, ("not in the baseline",))
    ]
    assert result.regressions == () and result.verdict == "pass"


def test_different_schema_is_refused():
    base, head = run(question("A")), run(question("A"))
    base.meta.question_set_schema = 0
    with pytest.raises(IncompatibleBaseline, match="question-set schema"):
        compare(base, head)


def judge(model="claude-haiku-4-5-20251001", **over):
    fields = dict(
        provider="anthropic",
        model=model,
        temperature=0.0,
        deepeval_version="4.3.1",
        metrics={"faithfulness": {"threshold": 0.7}},
        prompt_hash="p",
    )
    return JudgeFingerprint(**{**fields, **over})


def test_a_different_judge_model_leaves_out_the_judged_metrics_only():
    base = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0), metric("faithfulness", 0.9, 0.7, "judge")]),
        judge=judge(),
        thresholds={"hit_at_k": 1.0, "faithfulness": 0.7},
    )
    head = run(
        question(
            "A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0), metric("faithfulness", 0.1, 0.7, "judge")]
        ),
        judge=judge("claude-sonnet-4-5-20250929"),
        thresholds={"hit_at_k": 1.0, "faithfulness": 0.7},
    )
    result = compare(base, head)
    [left_out] = result.not_comparable
    assert left_out.name == "faithfulness"
    assert left_out.differences == ("judge.model: claude-haiku-4-5-20251001 → claude-sonnet-4-5-20250929",)
    assert [c.id for c in result.regressions] == ["A"]  # hit_at_k still gates
    assert [m.name for m in result.regressions[0].metrics] == ["hit_at_k"]


def test_judge_added_since_baseline_makes_its_metrics_not_comparable():
    head = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0), metric("faithfulness", 0.1, 0.7, "judge")]),
        judge=judge(),
        thresholds={"hit_at_k": 1.0, "faithfulness": 0.7},
    )
    result = compare(run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)])), head)
    assert [n.name for n in result.not_comparable] == ["faithfulness"] and result.verdict == "pass"


def test_to_dict_carries_the_promised_keys():
    data = compare(run(question("A")), run(question("A", "fail"))).to_dict()
    assert {"verdict", "regressions", "gains", "changed", "new", "removed", "latency", "cost"} <= set(data)
    assert data["regressions"][0]["id"] == "A" and data["verdict"] == "fail"


def test_a_question_is_judged_on_its_comparable_metrics_plus_its_own_errors():
    from rag_ci.core.results import MetricResult

    broken_judge = MetricResult(
        name="faithfulness", kind="judge", threshold=0.7, error="judge error: HTTP 500"
    )
    base = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]),
        question("B", metrics=[metric("hit_at_k", 1.0, 1.0)]),
    )
    judge_failed = question("A", "error", metrics=[metric("hit_at_k", 1.0, 1.0), broken_judge]).model_copy(
        update={"error": None}
    )
    head = run(
        judge_failed,
        question("B", "error", metrics=[metric("hit_at_k", 1.0, 1.0)]),  # the target itself failed
        judge=judge(),
        thresholds={"hit_at_k": 1.0, "faithfulness": 0.7},
    )
    result = compare(base, head)
    assert [n.name for n in result.not_comparable] == ["faithfulness"]
    assert [c.id for c in result.regressions] == ["B"]


def test_metric_reasons_are_shown_for_regressions_worse_and_unusable_baselines_only():
    from rag_ci.core.comparison.question_change import reasons_shown

    faith = lambda score: metric("faithfulness", score, 0.7, kind="judge")
    failing_a = question("A", "fail", metrics=[faith(0.2), metric("mrr", 0.9)])
    assert reasons_shown(None, failing_a) == frozenset()  # a run without baseline prints no metric reason
    assert reasons_shown(question("A", metrics=[faith(0.9), metric("mrr", 0.9)]), failing_a) == {
        "faithfulness"
    }
    assert reasons_shown(failing_a, failing_a) == frozenset()  # failing as before: printed nowhere
    worse = question("A", "fail", metrics=[faith(0.2), metric("mrr", 0.1)])  # retrieval got worse too
    assert reasons_shown(failing_a, worse) == {"faithfulness", "mrr"}
    assert reasons_shown(question("A", "error"), failing_a) == {"faithfulness"}  # no usable baseline verdict
    assert reasons_shown(question("A", hash_="edited"), failing_a) == frozenset()  # an edited question
    assert reasons_shown(failing_a, question("A", metrics=[faith(0.9)])) == frozenset()  # a gain


def test_the_reasons_shown_are_the_ones_the_comparison_prints():
    from rag_ci.core.comparison.question_change import reasons_shown

    judge = lambda name, score: metric(name, score, 0.7, kind="judge")
    base = run(
        question("R", metrics=[judge("faithfulness", 0.9)]),
        question("W", "fail", metrics=[judge("faithfulness", 0.2), metric("mrr", 0.9)]),
        question("S", "fail", metrics=[judge("faithfulness", 0.2)]),
    )
    head = run(
        question("R", "fail", metrics=[judge("faithfulness", 0.1)]),
        question("W", "fail", metrics=[judge("faithfulness", 0.2), metric("mrr", 0.1)]),
        question("S", "fail", metrics=[judge("faithfulness", 0.3)]),
    )
    result = compare(base, head)
    printed = {c.id for c in result.regressions + result.worse if c.reason and "faithfulness=" in c.reason}
    old = base.by_id()
    assert (
        printed
        == {q.id for q in head.questions if "faithfulness" in reasons_shown(old[q.id], q)}
        == {"R", "W"}
    )


def test_largest_latency_changes_mix_questions_that_passed_on_both_runs_with_the_rest_in_head_order():
    # Questions passing on both runs take a short path through compare: their
    # rows are made only when they are among the largest latency changes, and the same as any.
    from rag_ci.core.comparison.question_change import question_change

    base = run(
        question("A", latency=0.1),
        question("B", latency=0.1),
        question("C", latency=0.1),
        question("D", latency=0.1),
    )
    head = run(
        question("D", "fail", latency=0.4),
        question("C", latency=0.4),
        question("B", latency=0.1),
        question("A", latency=0.6),
    )
    result = compare(base, head, top_latency=3)
    # 0.5, then 0.3 twice in head order
    assert [c.id for c in result.largest_latency_changes] == [
        "A",
        "D",
        "C",
    ]
    assert result.largest_latency_changes[0] == question_change(base.questions[0], head.questions[3])
    assert [c.id for c in result.regressions] == ["D"]
