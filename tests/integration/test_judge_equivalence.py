"""judge.reuse_equivalent_answers: one binary judge call carries a reworded answer's verdicts."""

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.core.comparison.compare import compare

CASES = cases(4)
SAME_FACTS = " That is all."  # a sentence stating nothing: same facts, new text
ANSWER_METRICS = {"faithfulness", "answer_relevancy", "correctness", "completeness"}


def items(answer=lambda c: c.correct, contexts=lambda c: c.contexts):
    return [(c.question, answer(c), contexts(c)) for c in CASES]


def test_a_reworded_answer_with_the_same_facts_costs_one_judge_call_and_keeps_its_verdicts(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server, reuse_equivalent_answers=True)
    baseline, _ = score_once(config, items())
    server.reset()
    head, scorer = score_once(config, items(answer=lambda c: c.correct + SAME_FACTS), baseline=baseline)
    assert server.kinds() == ["equivalence"] * 4
    assert scorer.equivalent_carries == 4
    for record in head.questions:
        before = baseline.by_id()[record.id]
        assert {n for n, m in record.metrics.items() if m.equivalent_answer} == ANSWER_METRICS
        assert all(m.cached for m in record.metrics.values())
        assert {n: m.score for n, m in record.metrics.items()} == {
            n: m.score for n, m in before.metrics.items()
        }
    # Carried verdicts are stored under the new answer's key: the same answer next time costs nothing.
    server.reset()
    score_once(config, items(answer=lambda c: c.correct + SAME_FACTS), baseline=head)
    assert server.requests == 0


def test_a_one_fact_edit_is_judged_again_and_its_regression_is_caught(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server, reuse_equivalent_answers=True)
    baseline, _ = score_once(config, items())
    server.reset()
    broken = CASES[2].question.id
    head, scorer = score_once(
        config,
        items(answer=lambda c: c.wrong if c.question.id == broken else c.correct + SAME_FACTS),
        baseline=baseline,
    )
    assert scorer.equivalence_calls == 4 and scorer.equivalent_carries == 3
    assert not any(m.equivalent_answer for m in head.by_id()[broken].metrics.values())
    assert [r.id for r in compare(baseline, head).regressions] == [broken]


def test_faithfulness_is_not_carried_when_the_contexts_changed(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server, reuse_equivalent_answers=True)
    baseline, _ = score_once(config, items())
    head, _ = score_once(
        config,
        items(answer=lambda c: c.correct + SAME_FACTS, contexts=lambda c: tuple(reversed(c.contexts))),
        baseline=baseline,
    )
    for record in head.questions:
        assert {n for n, m in record.metrics.items() if m.equivalent_answer} == ANSWER_METRICS - {
            "faithfulness"
        }
        assert not record.metrics["faithfulness"].cached


def test_without_the_option_no_equivalence_question_is_asked(fake_judge):
    server = fake_judge("openai")
    config = judge_config("openai", server)
    baseline, _ = score_once(config, items())
    server.reset()
    head, _ = score_once(config, items(answer=lambda c: c.correct + SAME_FACTS), baseline=baseline)
    assert "equivalence" not in server.kinds() and server.requests > 0
    assert not any(m.equivalent_answer for q in head.questions for m in q.metrics.values())


def test_the_labelled_set_from_the_example_measures_false_carries(fake_judge):
    from benchmarks.equivalence import labelled_pairs, measure
    from rag_ci.judges.build import build_judge

    pairs = labelled_pairs()
    assert {p["same"] for p in pairs} == {True, False} and len(pairs) > 100
    edits = [p for p in pairs if not p["same"]]
    assert all(p["new"] != p["baseline"] for p in pairs)
    assert {p["kind"] for p in edits} == {
        "one number changed",
        "last sentence dropped",
        "a sentence of another answer appended",
    }
    server = fake_judge("openai")
    client = build_judge(judge_config("openai", server), env=FAKE_KEYS).client
    result = measure(client, pairs[:20])
    assert server.kinds() == ["equivalence"] * 20
    assert result["pairs"] == 20 and result["one_fact_edits"] + result["paraphrases"] == 20
    assert 0 <= result["false_carry_rate"] <= 1
