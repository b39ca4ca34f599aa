"""A judge that is down for good stops the run's judging within judge.max_wait_s, not after
max_retries back-offs per call times every metric; a judge that answers again is kept."""

import time

import pytest

from fakes.judge_cases import score_cases
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.judges.build import build_judge

MAX_WAIT_S = 1.0


@pytest.mark.parametrize("fault", ["500", "429"])
def test_a_judge_failing_forever_stops_within_max_wait_and_every_metric_is_error(fault, fake_judge):
    # 500: without the breaker every call backs off 6 times (0.5 s doubling: ~15-30 s per call).
    # 429 + Retry-After 0.2 s: without it every call waits up to max_retry_after_s (120 s).
    server = fake_judge("openai", always_fault=fault, retry_after="0.2")
    scorer = build_judge(
        judge_config("openai", server, max_retries=6, backoff_s=0.5, max_wait_s=MAX_WAIT_S, concurrency=4),
        env=FAKE_KEYS,
    )
    result = score_cases(scorer, n=6)
    # From the judge's first failure (not from the start: importing DeepEval takes seconds).
    elapsed = time.time() - server.log[0].at

    assert elapsed < MAX_WAIT_S + 1.5, f"judging went on {elapsed:.1f}s after the first failure"
    metrics = [m for q in result.questions for m in q.metrics.values()]
    assert len(metrics) == 6 * 6 and all(m.error for m in metrics)
    assert all(q.verdict == "error" for q in result.questions)
    assert any(m.error.startswith("judge error: judge unavailable for 1 s") for m in metrics)
    assert any(f"HTTP {fault}" in m.error for m in metrics)  # the last error is named
    # Once given up, no call is made any more.
    assert max(r.at for r in server.log) - server.log[0].at < MAX_WAIT_S + 0.5


def test_a_judge_that_answers_again_within_max_wait_is_kept(fake_judge):
    server = fake_judge("openai")
    server.queue_faults("500", "500", "500")
    scorer = build_judge(
        judge_config("openai", server, metrics={"correctness": {}}, backoff_s=0.2, max_wait_s=MAX_WAIT_S),
        env=FAKE_KEYS,
    )
    result = score_cases(scorer, n=2)
    assert all(q.verdict == "pass" for q in result.questions)
    assert [r.status for r in server.log].count(500) == 3
