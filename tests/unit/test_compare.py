"""Compare semantics: regressions, gains, changed, new, removed, crossings, incompatibility."""

import pytest

from builders import metric, question, run
from rag_ci.core.compare import compare
from rag_ci.core.results import JudgeFingerprint
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


def test_a_still_failing_question_that_got_worse_is_a_metric_regression_only():
    base = run(question("A", "fail", metrics=[metric("mrr", 0.6), metric("kw", 0.1)]))
    head = run(question("A", "fail", metrics=[metric("mrr", 0.2), metric("kw", 0.1)]))
    result = compare(base, head)
    assert result.regressions == () and [c.id for c in result.metric_regressions] == ["A"]


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


def test_different_thresholds_are_refused_with_what_differs_and_how_to_rebaseline():
    base = run(question("A"), thresholds={"hit_at_k": 1.0, "keyword_coverage": 0.6})
    head = run(question("A"), thresholds={"hit_at_k": 1.0, "keyword_coverage": 0.8})
    with pytest.raises(IncompatibleBaseline) as caught:
        compare(base, head)
    message = str(caught.value)
    assert "keyword_coverage: 0.6 → 0.8" in message and "workflow_dispatch" in message and "rebaseline: true" in message


def test_different_schema_is_refused():
    base, head = run(question("A")), run(question("A"))
    base.meta.question_set_schema = 0
    with pytest.raises(IncompatibleBaseline, match="question-set schema"):
        compare(base, head)


def judge(model="claude-haiku-4-5-20251001", **over):
    fields = dict(provider="anthropic", model=model, temperature=0.0, deepeval_version="4.3.1", metrics={"faithfulness": {"threshold": 0.7}}, prompt_hash="p")
    return JudgeFingerprint(**{**fields, **over})


def test_different_judge_fingerprint_is_refused_naming_the_field():
    with pytest.raises(IncompatibleBaseline, match="judge model: baseline 'claude-haiku-4-5-20251001', this run 'claude-sonnet-4-5-20250929'"):
        compare(run(question("A"), judge=judge()), run(question("A"), judge=judge("claude-sonnet-4-5-20250929")))


def test_judge_added_since_baseline_is_refused():
    with pytest.raises(IncompatibleBaseline, match="baseline none, this run anthropic"):
        compare(run(question("A")), run(question("A"), judge=judge()))


def test_to_dict_carries_the_promised_keys():
    data = compare(run(question("A")), run(question("A", "fail"))).to_dict()
    assert {"verdict", "regressions", "gains", "changed", "new", "removed", "latency", "cost"} <= set(data)
    assert data["regressions"][0]["id"] == "A" and data["verdict"] == "fail"
