"""A judge that disagrees with itself: a regression is called only when the judge is sure on both sides.

The repository's scripted judge (rag_ci/judges/fake.py behind the fake OpenAI server) flips
each of its verdicts (GEval scores, and every yes/no verdict of faithfulness, contextual
recall...) at random with a seed; the baseline is judged by the same noisy judge, so some of
its verdicts are noise passes of answers that truly fail. Pull requests reword every answer
(the same facts), so every answer is judged afresh. docs/noise.md, "Judge noise".
"""

from __future__ import annotations

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import judge_config
from rag_ci.core.comparison.compare import compare
from rag_ci.core.results import Context
from rag_ci.judges.fake import JudgePolicy

N = 60
CASES = cases(N)
# 12 answers that truly fail, before and after: they state an older unit's value, which their
# contexts also hold, so only correctness fails them (faithful to the contexts, and recall passes).
WRONG_ON_BOTH = frozenset(c.question.id for c in CASES[::5])
WORDINGS = (
    "per its specification",
    "according to its datasheet",
    "as its manual states",
    "as documented",
    "by its specification sheet",
    "so the documentation says",
)
THREE_METRICS = {"correctness": {}, "faithfulness": {}, "contextual_recall": {}}


def answer(case, wording: int, wrong: bool) -> str:
    """The case's fact (or its wrong value) in the given wording: the text changes, the verdict does not."""
    q = case.question
    value = case.correct.rsplit(" is ", 1)[1].rstrip(".")
    if wrong:
        number, unit = value.split(" ")
        value = f"{int(number) + 7} {unit}"
    topic = q.question.removeprefix("What is the ").split(" of unit")[0]
    unit_no = q.id.removeprefix("Q").lstrip("0") or "0"
    return f"Unit {unit_no} has a {topic} of {value}, {WORDINGS[wording]}."


def contexts(case):
    if case.question.id not in WRONG_ON_BOTH:
        return case.contexts
    older = answer(case, 0, wrong=True).split(" has a ")[1].split(",")[0]
    return (*case.contexts, Context(text=f"Older units: the {older}.", doc_id="a", source="a/older.md#0"))


def items(wording: int, wrong: frozenset[str]):
    return [(c.question, answer(c, wording, c.question.id in wrong), contexts(c)) for c in CASES]


def reworded_prs(
    fake_judge,
    *,
    p: float,
    seed: int,
    metrics: dict,
    prs: int = 5,
    made_wrong: frozenset[str] = frozenset(),
    **judge,
):
    """A baseline and `prs` pull requests rewording every answer, all judged by one judge flipping p of its verdicts."""
    server = fake_judge("openai", policy=JudgePolicy(flip_probability=p, seed=seed))
    config = judge_config("openai", server, metrics=metrics, **judge)
    baseline, _ = score_once(config, items(0, WRONG_ON_BOTH))
    runs = []
    for pr in range(1, prs + 1):
        head, scorer = score_once(config, items(pr, WRONG_ON_BOTH | made_wrong), baseline=baseline)
        runs.append((compare(baseline, head), head, scorer))
    return baseline, runs


def test_five_reworded_prs_under_a_judge_flipping_5_percent_stay_green(fake_judge):
    baseline, runs = reworded_prs(fake_judge, p=0.05, seed=11, metrics=THREE_METRICS)
    noise_passes = [q.id for q in baseline.questions if q.id in WRONG_ON_BOTH and q.passed]
    assert noise_passes, "the noisy judge passed none of the wrong baseline answers: the seed tests nothing"
    red = sum(1 for cmp, _, _ in runs if cmp.verdict == "fail")
    false_alarms = sum(len(cmp.regressions) + len(cmp.worse) for cmp, _, _ in runs)
    assert red == 0 and false_alarms == 0, [
        (c.verdict, [r.id for r in c.regressions], [w.id for w in c.worse]) for c, _, _ in runs
    ]
    # The baseline's noise passes were asked again and did not hold up: said, not gated.
    noise = [n for cmp, _, _ in runs for n in cmp.judge_noise if n.kind == "baseline_noise"]
    assert noise and {n.id for n in noise} <= set(noise_passes)
    assert all(n.label.startswith("baseline verdict was noise") for n in noise)


def test_a_judge_flipping_10_percent_of_correctness_verdicts_calls_at_most_one_false_regression(fake_judge):
    _, runs = reworded_prs(fake_judge, p=0.10, seed=3, metrics={"correctness": {}}, prs=3)
    for cmp, _, _ in runs:
        assert len(cmp.regressions) + len(cmp.worse) <= 1, [r.id for r in cmp.regressions]


def test_every_answer_made_wrong_is_a_regression_in_every_run_under_a_steady_judge(fake_judge):
    made_wrong = frozenset([c.question.id for c in CASES if c.question.id not in WRONG_ON_BOTH][:10])
    _, runs = reworded_prs(fake_judge, p=0.0, seed=0, metrics=THREE_METRICS, made_wrong=made_wrong)
    for cmp, head, _ in runs:
        assert {r.id for r in cmp.regressions} == made_wrong and cmp.verdict == "fail"
        for qid in made_wrong:  # established on both sides: the head fails, the baseline's answer passes
            confirmed = [m for m in head.by_id()[qid].metrics.values() if m.baseline_votes]
            assert confirmed and all(not m.passed and all(m.baseline_votes) for m in confirmed)


def test_a_flip_still_split_at_the_cap_is_shown_in_the_row_and_does_not_gate(fake_judge):
    # A judge flipping 30 % of its verdicts (and known to: lead 7, cap 15): some walks of votes
    # never reach the lead within the cap. What remains there is a split, never one dissent.
    _, runs = reworded_prs(
        fake_judge, p=0.30, seed=3, metrics={"correctness": {}}, prs=1, disagreement_rate=0.3
    )
    cmp, head, _ = runs[0]
    splits = [n for n in cmp.judge_noise if n.kind == "split"]
    assert splits
    for n in splits:
        votes = n.baseline_votes if n.on_baseline else n.head_votes
        # Drawn until the verdict that would matter (the baseline's pass, the head's fail) could
        # no longer lead by 7 within the cap of 15 votes.
        hoped = votes.count(n.on_baseline) - votes.count(not n.on_baseline)
        assert hoped + 15 - len(votes) < 7 < len(votes)
        bigger = max(votes.count(True), votes.count(False))
        assert n.label.startswith(f"judge split {bigger}–{len(votes) - bigger}")
        assert n.id not in {c.id for c in cmp.gating}


def test_the_comment_shows_each_unestablished_flip_in_its_row_and_counts_confirmation_calls(fake_judge):
    from rag_ci.core.reporting.render import render_markdown

    _, runs = reworded_prs(fake_judge, p=0.05, seed=11, metrics=THREE_METRICS, prs=1)
    cmp, head, _ = runs[0]
    text = render_markdown(head, cmp)
    assert cmp.judge_noise
    for n in cmp.judge_noise:
        assert f"| {n.id} | {n.label} |" in text
    calls = sum(m.confirm_calls for q in head.questions for m in q.metrics.values())
    assert calls and f"Judge confirmation: {calls} calls re-judging flipped verdicts" in text


def test_a_judge_with_a_lower_measured_disagreement_needs_fewer_confirmation_votes(fake_judge):
    # judge.disagreement_rate 2 % (what `rag-ci calibrate` printed): a lead of 2 establishes each side.
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"correctness": {}}, disagreement_rate=0.02)
    case = CASES[1]
    baseline, _ = score_once(config, [(case.question, case.correct, case.contexts)])
    server.reset()
    head, _ = score_once(config, [(case.question, case.wrong, case.contexts)], baseline=baseline)
    metric = head.questions[0].metrics["correctness"]
    assert metric.confirm_runs == [False, False] and metric.baseline_votes == [True, True]
    assert server.requests == 1 + 1 + 1 and metric.confirm_calls == 2


def test_a_multi_verdict_metric_is_confirmed_by_asking_only_its_verdict_step_again(fake_judge):
    # Faithfulness is truths → claims → verdicts; the verdicts decide the threshold. Confirming a
    # flip replays the extraction (this run's and the baseline's, from results.json) and asks the
    # verdicts again: one call per re-judgement on each side, never the whole chain.
    server = fake_judge("openai")
    config = judge_config("openai", server, metrics={"faithfulness": {}})
    case = CASES[2]
    baseline, _ = score_once(config, [(case.question, case.correct, case.contexts)])
    server.reset()
    head, _ = score_once(config, [(case.question, case.wrong, case.contexts)], baseline=baseline)
    metric = head.questions[0].metrics["faithfulness"]
    assert metric.confirm_runs == [False] * 3 and metric.baseline_votes == [True] * 3
    # + the reason the regression's row prints (one call, every step replayed).
    assert sorted(server.kinds()) == sorted(["claims"] + ["faithfulness_verdicts"] * (1 + 2 + 2) + ["reason"])


def test_an_unstable_faithfulness_verdict_names_the_claim_its_votes_disagreed_on(fake_judge):
    # Faithfulness votes are a verdict per claim of the answer: the row quotes the claim whose
    # verdict differed between votes, so a person can decide.
    _, runs = reworded_prs(
        fake_judge, p=0.30, seed=5, metrics={"faithfulness": {}}, prs=1, disagreement_rate=0.3
    )
    cmp, head, _ = runs[0]
    named = [n for n in cmp.judge_noise if n.split_on]
    assert named
    for n in named:
        answer = head.by_id()[n.id].answer or ""
        assert n.split_on in answer and n.label.endswith(f"split on: “{n.split_on}”")
