"""The baseline's own noise must not hide a regression (docs/noise.md, "Judge noise", rule 2).

A baseline verdict that failed by noise (its stored answer is right) would make a PR that
breaks the answer look like "failing before and now". The scripted judge behind the fake
OpenAI server is steady here; the baseline's noise fail is written into its results, as a
judge flipping that one verdict would have left it.
"""

from __future__ import annotations

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import judge_config
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_markdown

CASES = cases(6)
BROKEN = CASES[1]


def with_noise_fail(baseline, answer: str | None = None):
    """`baseline` with BROKEN's correctness stored as a fail (and, given, another stored answer)."""
    record = baseline.by_id()[BROKEN.question.id]
    metric = record.metrics["correctness"].model_copy(update={"passed": False, "score": 0.0})
    update = {"metrics": {**record.metrics, "correctness": metric}, "verdict": "fail"}
    if answer is not None:
        update["answer"] = answer
    changed = record.model_copy(update=update)
    questions = [changed if q.id == changed.id else q for q in baseline.questions]
    return baseline.model_copy(update={"questions": questions})


def broken_pr(fake_judge, stored_answer: str | None = None):
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"correctness": {}})
    baseline, _ = score_once(config, [(c.question, c.reworded, c.contexts) for c in CASES])
    baseline = with_noise_fail(baseline, stored_answer)
    items = [(c.question, c.wrong if c is BROKEN else c.reworded, c.contexts) for c in CASES]
    head, _ = score_once(config, items, baseline=baseline)
    return baseline, head


def test_a_noise_fail_on_the_baseline_is_re_judged_and_the_regression_gates(fake_judge):
    baseline, head = broken_pr(fake_judge)
    metric = head.by_id()[BROKEN.question.id].metrics["correctness"]
    # The stored fail first, then the stored answer re-judged until its pass leads by 3.
    assert metric.baseline_votes == [False, True, True, True, True] and metric.baseline_confirmed is True
    assert metric.confirm_runs == [False, False, False] and metric.passed is False
    comparison = compare(baseline, head)
    assert [r.id for r in comparison.regressions] == [BROKEN.question.id] and comparison.verdict == "fail"
    text = render_markdown(head, comparison)
    assert (
        "correctness judged 3× fail on this PR, the baseline's answer re-judged 4× pass "
        "(its stored fail was noise)" in text
    )
    # Every gating row is confirmed by the judge's votes: no "re-run if you think it is noise".
    assert "think it is noise" not in text


def test_a_stored_answer_emptied_since_its_verdict_is_not_re_judged_and_its_verdict_stands(fake_judge):
    baseline, head = broken_pr(fake_judge, stored_answer="")
    metric = head.by_id()[BROKEN.question.id].metrics["correctness"]
    assert metric.baseline_votes == [] and metric.confirm_calls == 0  # nothing asked again
    assert compare(baseline, head).regressions == ()  # failing before (as stored) and now


def test_a_right_baseline_fail_holds_after_one_agreeing_vote(fake_judge):
    # The common case on every answer failing before and now: one re-judgement of the stored
    # answer agrees with its fail, and nothing else is asked.
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"correctness": {}})
    baseline, _ = score_once(config, [(c.question, c.wrong, c.contexts) for c in CASES])
    server.reset()
    reworded_wrong = [(c.question, c.wrong.replace("The ", "So the ", 1), c.contexts) for c in CASES]
    head, _ = score_once(config, reworded_wrong, baseline=baseline)
    assert all(
        m.confirm_calls == 1 and not m.baseline_votes for q in head.questions for m in q.metrics.values()
    )
    assert compare(baseline, head).regressions == ()
