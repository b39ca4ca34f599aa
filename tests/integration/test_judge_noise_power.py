"""Power under an ordinary noisy judge: a truly broken metric is caught about as often as one verdict allows.

The repository's scripted judge (rag_ci/judges/fake.py behind the fake OpenAI server) flips
each verdict with probability p, seeded; every baseline is judged by the same noisy judge as
its pull request, and each pull request has its own baseline. A pull request breaks 50 of 60
answers (a wrong value: only correctness reads it, one judged metric each) and rewords the
other 10. docs/noise.md, "Judge noise": one verdict per changed answer cannot beat 1 - p;
`judge.votes_on_changed_answers: 2` asks a second verdict when the first passes.
"""

from __future__ import annotations

import pytest

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import judge_config
from rag_ci.core.comparison.compare import compare
from rag_ci.judges.fake import JudgePolicy

N = 60
CASES = cases(N)
BROKEN = frozenset(c.question.id for c in CASES[:50])
RUNS = 5  # 5 × 50 = 250 truly broken judged metrics per setting


def caught(fake_judge, p: float, votes: int) -> tuple[int, int, int]:
    """(broken metrics caught, broken metrics, false regressions among the reworded answers)."""
    hits = total = false = 0
    for run in range(RUNS):
        server = fake_judge("openai", policy=JudgePolicy(flip_probability=p, seed=1000 * votes + run))
        config = judge_config(
            "openai",
            server,
            metrics={"correctness": {}},
            votes_on_changed_answers=votes,
            disagreement_rate=p or None,
        )
        baseline, _ = score_once(config, [(c.question, c.correct, c.contexts) for c in CASES])
        items = [(c.question, c.wrong if c.question.id in BROKEN else c.reworded, c.contexts) for c in CASES]
        head, _ = score_once(config, items, baseline=baseline)
        regressed = {r.id for r in compare(baseline, head).regressions}
        hits += len(regressed & BROKEN)
        total += len(BROKEN)
        false += len(regressed - BROKEN)
        server.stop()
    return hits, total, false


@pytest.mark.parametrize(
    ("p", "votes", "at_least"),
    [(0.05, 1, 0.94), (0.10, 1, 0.88), (0.05, 2, 0.99), (0.10, 2, 0.97)],
)
def test_truly_broken_metrics_are_caught_as_often_as_the_policy_allows(fake_judge, p, votes, at_least):
    hits, total, false = caught(fake_judge, p, votes)
    assert total >= 200
    assert hits / total >= at_least, f"{hits}/{total} caught at p = {p:.0%}, {votes} verdict(s)"
    assert false == 0


def test_a_steady_judge_catches_every_broken_metric_with_no_extra_verdict(fake_judge):
    hits, total, false = caught(fake_judge, 0.0, 1)
    assert hits == total and false == 0
