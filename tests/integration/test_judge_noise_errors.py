"""A judge that errors while confirming a regression: the metric is an error, never a vote, a split or noise.

Real HTTP judge servers (tests/fakes/judge_servers.py) answer the first judgement of a broken
answer, then fail its re-judgements (this PR's answer) or those of the baseline's stored answer:
HTTP 500, a time-out, a body that is not JSON, a 429 rate limit. The client retries within its
budget (Retry-After honoured); what still fails makes the metric an error for that question, which
gates as errors do. docs/noise.md, "Judge noise".
"""

from __future__ import annotations

import pytest

from fakes.judge_cases import cases, score_once
from fakes.judge_setup import judge_config
from rag_ci.core.comparison.compare import compare

CASES = cases(6)
BROKEN = CASES[1]
# A hanging re-judgement never answers (until the server stops): 2 s of time-out cuts it and
# leaves every answered call room on a busy machine.
FAST_FAILURE = {"timeout_s": 2.0, "max_retries": 1, "backoff_s": 0.01, "max_wait_s": 2.0}


def regression_under(server, **judge):
    """A baseline of reworded (correct) answers, then a PR breaking one of them, judged by `server`."""
    config = judge_config("openai", server, metrics={"correctness": {}}, **judge)
    baseline, _ = score_once(config, [(c.question, c.reworded, c.contexts) for c in CASES])
    items = [(c.question, c.wrong if c is BROKEN else c.reworded, c.contexts) for c in CASES]
    head, _ = score_once(config, items, baseline=baseline)
    return compare(baseline, head), head.by_id()[BROKEN.question.id]


@pytest.mark.parametrize("side", ["head", "baseline"])
@pytest.mark.parametrize(
    ("fault", "says"), [("500", "500"), ("hang", "time"), ("invalid_json", "json"), ("429", "429")]
)
def test_a_judge_failing_its_re_judgements_makes_the_metric_an_error_that_gates(
    fake_judge, side, fault, says
):
    server = fake_judge("openai", hang_s=None, retry_after="1")
    server.fail_rejudging(BROKEN.wrong if side == "head" else BROKEN.reworded, always=fault)
    comparison, record = regression_under(server, **FAST_FAILURE)
    metric = record.metrics["correctness"]
    assert (
        metric.error is not None and says in metric.error.lower() and metric.error.startswith("judge error")
    )
    rejudged = "this PR's answer" if side == "head" else "the baseline's stored answer"
    assert rejudged in metric.error
    assert metric.passed is None and not metric.judge_split and metric.baseline_confirmed is None
    assert record.verdict == "error"
    assert comparison.verdict == "fail" and BROKEN.question.id in {q.id for q in comparison.regressions}
    assert not comparison.judge_noise  # an error is never shown as a split or as noise


@pytest.mark.parametrize("side", ["head", "baseline"])
def test_a_rate_limit_during_confirmation_is_waited_out_and_the_regression_is_established(fake_judge, side):
    server = fake_judge("openai", retry_after="1")
    server.fail_rejudging(BROKEN.wrong if side == "head" else BROKEN.reworded, "429", "429")
    comparison, record = regression_under(server)
    metric = record.metrics["correctness"]
    assert metric.error is None and metric.passed is False
    assert metric.confirm_runs == [False] * 3 and metric.baseline_votes == [True] * 3
    assert [q.id for q in comparison.regressions] == [BROKEN.question.id]
    assert [entry.status for entry in server.log].count(429) == 2


def test_confirmation_calls_keep_to_the_judges_concurrency(fake_judge):
    server = fake_judge("openai", latency_s=0.05)
    config = judge_config("openai", server, metrics={"correctness": {}}, concurrency=2, concurrency_max=2)
    many = cases(12)
    baseline, _ = score_once(config, [(c.question, c.reworded, c.contexts) for c in many])
    server.reset()
    head, _ = score_once(config, [(c.question, c.wrong, c.contexts) for c in many], baseline=baseline)
    assert sum(m.confirm_calls for q in head.questions for m in q.metrics.values()) >= 12 * 4
    assert server.max_in_flight <= 2
