"""Noise control: the verdict cache, confirmation runs, and the judge fingerprint."""

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import judge_config
from rag_ci.core.comparison.compare import compare
from rag_ci.judges.fake import JudgePolicy

CASES = cases(6)
# Judge calls to score one correct answer with the six metrics, reasons left out (nothing fails):
# faithfulness 3 (truths, claims, verdicts), answer relevancy 2, contextual precision 1,
# contextual recall 1, correctness 1, completeness 1 (DeepEval 4.3.1).
COLD_CALLS = 9


def correct_items(answers=None, contexts=None):
    return [
        (
            c.question,
            (answers or {}).get(c.question.id, c.correct),
            (contexts or {}).get(c.question.id, c.contexts),
        )
        for c in CASES
    ]


def test_an_unchanged_target_is_not_judged_again(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline, _ = score_once(config, correct_items())
    assert server.requests == 6 * COLD_CALLS
    server.reset()

    again, scorer = score_once(config, correct_items(), baseline=baseline)
    assert server.requests == 0
    assert scorer.cache_hits == 6 * 6
    metrics = [m for q in again.questions for m in q.metrics.values()]
    assert all(m.cached and m.judge_cost_usd == 0.0 for m in metrics)
    assert [(q.id, q.verdict) for q in again.questions] == [(q.id, q.verdict) for q in baseline.questions]
    # The cache travels: a run built from a cached run still hits.
    server.reset()
    score_once(config, correct_items(), baseline=again)
    assert server.requests == 0


def test_full_mode_ignores_the_cache(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline, _ = score_once(config, correct_items())
    server.reset()
    rerun, _ = score_once(config, correct_items(), baseline=baseline, full=True)
    assert server.requests == 6 * COLD_CALLS
    assert not any(m.cached for q in rerun.questions for m in q.metrics.values())


def test_a_changed_answer_re_judges_only_the_metrics_that_read_the_answer(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline, _ = score_once(config, correct_items())
    server.reset()
    changed = CASES[0]
    rerun, _ = score_once(
        config, correct_items(answers={changed.question.id: changed.reworded}), baseline=baseline
    )
    fresh = {n for n, m in rerun.by_id()[changed.question.id].metrics.items() if not m.cached}
    assert fresh == {"faithfulness", "answer_relevancy", "correctness", "completeness"}
    # faithfulness: the truths of the unchanged contexts are replayed from the baseline (claims + verdicts);
    # answer relevancy: statements + verdicts; the two GEval metrics: one call each. No reason: all pass.
    assert server.requests == 2 + 2 + 1 + 1


def test_reordered_contexts_re_judge_the_metrics_that_read_contexts(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline, _ = score_once(config, correct_items())
    server.reset()
    case = CASES[0]
    rerun, _ = score_once(
        config, correct_items(contexts={case.question.id: tuple(reversed(case.contexts))}), baseline=baseline
    )
    record = rerun.by_id()[case.question.id]
    assert {n for n, m in record.metrics.items() if not m.cached} == {
        "faithfulness",
        "contextual_precision",
        "contextual_recall",
    }
    assert (
        record.metrics["contextual_precision"].score
        < baseline.by_id()[case.question.id].metrics["contextual_precision"].score
    )


# A judge that inverts 10% of GEval verdicts. Flips are seeded per (prompt, occurrence), so the
# outcome is deterministic whatever order concurrent calls arrive in; with seed 5 it produces 4
# false regressions on these 20 questions when nothing confirms them.
FLIP = dict(flip_probability=0.1, seed=5)
FLIP_CASES = cases(20)


def flipping_runs(fake_judge, confirm_runs):
    """Baseline from a steady judge; then reworded (still correct) answers judged by a seeded flipper."""
    steady = fake_judge("openai")
    base_items = [(c.question, c.correct, c.contexts) for c in FLIP_CASES]
    baseline, _ = score_once(
        judge_config("openai", steady, metrics={"correctness": {}, "completeness": {}}), base_items
    )
    flaky = fake_judge("openai", policy=JudgePolicy(**FLIP))
    config = judge_config(
        "openai", flaky, metrics={"correctness": {}, "completeness": {}}, gate={"confirm_runs": confirm_runs}
    )
    head, scorer = score_once(
        config, [(c.question, c.reworded, c.contexts) for c in FLIP_CASES], baseline=baseline
    )
    return baseline, head, scorer


def test_without_confirmation_the_flipping_judge_produces_false_regressions(fake_judge):
    baseline, head, _ = flipping_runs(fake_judge, confirm_runs=0)
    assert all(q.verdict == "pass" for q in baseline.questions)
    assert len(compare(baseline, head).regressions) == 4


def test_confirmation_runs_outvote_a_flipping_judge(fake_judge):
    baseline, head, scorer = flipping_runs(fake_judge, confirm_runs=3)
    assert compare(baseline, head).regressions == ()
    confirmed = [m for q in head.questions for m in q.metrics.values() if m.confirm_runs]
    # The flipped fail is judged again, one vote at a time, until the pass leads by two: the fail
    # can no longer be established, the pass holds (the flip was noise: unstable, not a split).
    assert confirmed
    for m in confirmed:
        assert m.confirm_runs[0] is False and m.confirm_runs.count(True) - m.confirm_runs.count(False) == 2
        assert m.unstable and m.passed and not m.judge_split
    assert scorer.confirmations == len(confirmed)
    assert all(q.unstable for q in head.questions if any(m.confirm_runs for m in q.metrics.values()))


def test_a_genuine_regression_survives_confirmation(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"correctness": {}})
    baseline, _ = score_once(config, correct_items())
    broken = CASES[1]
    head, _ = score_once(config, correct_items(answers={broken.question.id: broken.wrong}), baseline=baseline)
    regressions = compare(baseline, head).regressions
    assert [r.id for r in regressions] == [broken.question.id]
    metric = head.by_id()[broken.question.id].metrics["correctness"]
    # Both sides established with a lead of 3: the head's answer fails three times, the baseline's
    # stored answer (its stored pass first) passes twice more.
    assert metric.confirm_runs == [False, False, False] and not metric.unstable
    assert metric.baseline_votes == [True, True, True] and not metric.judge_split


def test_one_confirmed_regression_of_a_question_settles_it_and_its_other_flips_are_not_rejudged(fake_judge):
    # Correctness and completeness both flip on a wrong answer; once one is
    # confirmed by the majority the question is a regression whatever the other says.
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"correctness": {}, "completeness": {}})
    baseline, _ = score_once(config, correct_items())
    broken = CASES[1]
    server.reset()
    head, scorer = score_once(
        config, correct_items(answers={broken.question.id: broken.wrong}), baseline=baseline
    )
    assert [r.id for r in compare(baseline, head).regressions] == [broken.question.id]
    metrics = head.by_id()[broken.question.id].metrics
    assert not metrics["correctness"].passed and not metrics["completeness"].passed
    # one confirmed on both sides, one as judged
    assert sorted(len(m.confirm_runs) for m in metrics.values()) == [
        0,
        3,
    ]
    assert scorer.confirmations == 1
    # the two fresh verdicts, two more on the head, two on the baseline's answer
    assert server.requests == 2 + 2 + 2


def test_a_baseline_from_another_judge_leaves_its_metrics_out_and_its_verdicts_are_not_reused(fake_judge):
    server = fake_judge("openai")
    baseline, _ = score_once(judge_config("openai", server), correct_items())
    server.reset()
    other = judge_config("openai", server, model="gpt-4.1-2025-04-14")
    head, _ = score_once(other, correct_items(), baseline=baseline)
    assert server.requests == 6 * COLD_CALLS  # no cache entry matches another judge's fingerprint
    left_out = compare(baseline, head).not_comparable
    assert len(left_out) == 6 and all(
        "judge.model: gpt-4.1-mini-2025-04-14 → gpt-4.1-2025-04-14" in n.differences for n in left_out
    )


def test_the_truths_of_unchanged_contexts_travel_in_results_json_and_are_not_extracted_again(fake_judge):
    from rag_ci.core.results import RunResult

    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"faithfulness": {}})
    baseline, _ = score_once(config, correct_items())
    assert server.kinds().count("truths") == 6
    from_disk = RunResult.model_validate_json(baseline.model_dump_json())
    server.reset()
    reworded = {c.question.id: c.reworded for c in CASES}
    rerun, scorer = score_once(config, correct_items(answers=reworded), baseline=from_disk)
    assert sorted(server.kinds()) == sorted(["claims", "faithfulness_verdicts"] * 6)
    assert scorer.replayed_calls == 6
    # Replayed truths give the score a full re-judging gives.
    server.reset()
    full, _ = score_once(config, correct_items(answers=reworded), baseline=from_disk, full=True)
    assert server.kinds().count("truths") == 6
    assert [q.metrics["faithfulness"].score for q in rerun.questions] == [
        q.metrics["faithfulness"].score for q in full.questions
    ]


def test_a_baseline_written_before_judge_replies_existed_still_loads_and_hits_the_verdict_cache(fake_judge):
    import json

    from rag_ci.core.results import RunResult

    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"faithfulness": {}})
    baseline, _ = score_once(config, correct_items())
    data = json.loads(baseline.model_dump_json())
    for question in data["questions"]:
        for metric in question["metrics"].values():
            metric.pop("judge_replies")
    server.reset()
    rerun, _ = score_once(config, correct_items(), baseline=RunResult.model_validate(data))
    assert server.requests == 0 and all(m.cached for q in rerun.questions for m in q.metrics.values())
