"""A judge that is down for good stops the run's judging within judge.max_wait_s, not after
max_retries back-offs per call times every metric; a judge that answers again is kept."""

import json
from dataclasses import replace

import pytest

from fakes.judge_cases import score_cases
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.judges.build import build_judge

MAX_WAIT_S = 1.0


@pytest.mark.timeout(120)  # a hang guard only: without the breaker the first retry waits >= 300 s
@pytest.mark.parametrize("fault", ["500", "429"])
def test_a_judge_failing_forever_stops_within_max_wait_and_every_metric_is_error(fault, fake_judge):
    # Every wait the client could take is far longer than max_wait_s: back-offs of 300-600 s
    # after a 500, a Retry-After of 600 s after a 429. So the run ends only if the breaker cuts
    # those waits at max_wait_s and fails every pending call: no clock needed, on any machine.
    server = fake_judge("openai", always_fault=fault, retry_after="600")
    scorer = build_judge(
        judge_config("openai", server, max_retries=6, backoff_s=600, max_wait_s=MAX_WAIT_S, concurrency=4),
        env=FAKE_KEYS,
    )
    scorer.client.policy = replace(scorer.client.policy, max_backoff_s=3600, max_retry_after_s=3600)
    result = score_cases(scorer, n=6)

    metrics = [m for q in result.questions for m in q.metrics.values()]
    assert len(metrics) == 6 * 6 and all(m.error for m in metrics)
    assert all(q.verdict == "error" for q in result.questions)
    assert any(m.error.startswith("judge error: judge unavailable for 1 s") for m in metrics)
    assert any(f"HTTP {fault}" in m.error for m in metrics)  # the last error is named
    # Once given up, no call is made any more: no prompt was sent twice (a wait cut short
    # and then retried, instead of given up, would send it again).
    prompts = [json.dumps(r.body["messages"], sort_keys=True) for r in server.log]
    assert prompts and len(prompts) == len(set(prompts))


def test_a_judge_that_answers_again_within_max_wait_is_kept(fake_judge):
    server = fake_judge("openai")
    server.queue_faults("500", "500", "500")
    # The outage lasts three back-offs (0.1-0.8 s in all): 30 s keeps even a busy machine's
    # outage inside max_wait_s, so the judge is kept on any machine.
    scorer = build_judge(
        judge_config("openai", server, metrics={"correctness": {}}, backoff_s=0.2, max_wait_s=30),
        env=FAKE_KEYS,
    )
    result = score_cases(scorer, n=2)
    assert all(q.verdict == "pass" for q in result.questions)
    assert [r.status for r in server.log].count(500) == 3
