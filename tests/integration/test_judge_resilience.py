"""Rate limits, server errors, invalid JSON and time-outs: retried, bounded, never a crash."""

import pytest

from fakes.judge_cases import score_cases
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.judges.build import build_judge

ONE_CALL = {"correctness": {}}  # one judge call per answer: easy to count


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_429_waits_for_retry_after_then_succeeds(provider, fake_judge):
    server = fake_judge(provider, retry_after="1")
    server.queue_faults("429")
    scorer = build_judge(judge_config(provider, server, metrics=ONE_CALL), env=FAKE_KEYS)
    result = score_cases(scorer).questions[0].metrics["correctness"]
    assert result.passed is True and result.error is None
    first, second = server.log
    assert (first.status, second.status) == (429, 200)
    # backoff_s is 0.01 in these configs: only Retry-After explains a one-second wait.
    assert second.at - first.at >= 0.95


def test_ollama_rate_limits_are_retried_with_backoff(fake_judge):
    server = fake_judge("ollama")
    server.queue_faults("429", "503")
    scorer = build_judge(judge_config("ollama", server, metrics=ONE_CALL), env={})
    assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
    assert [r.status for r in server.log] == [429, 503, 200]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "ollama"])
def test_server_errors_are_retried(provider, fake_judge):
    server = fake_judge(provider)
    server.queue_faults("500", "500")
    scorer = build_judge(judge_config(provider, server, metrics=ONE_CALL), env=FAKE_KEYS)
    assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
    assert scorer.stats.retries == 2 and server.requests == 3


def test_persistent_server_errors_mark_the_metric_error_after_max_retries(fake_judge):
    server = fake_judge("openai")
    server.queue_faults(*["500"] * 10)
    scorer = build_judge(judge_config("openai", server, metrics=ONE_CALL, max_retries=3), env=FAKE_KEYS)
    record = score_cases(scorer).questions[0]
    metric = record.metrics["correctness"]
    assert metric.error.startswith("judge error: HTTP 500") and "gave up after 4 attempts" in metric.error
    assert metric.passed is None and record.verdict == "error"
    assert server.requests == 4


def test_a_client_error_is_not_retried(fake_judge):
    server = fake_judge("openai")
    server.queue_faults("400")
    scorer = build_judge(judge_config("openai", server, metrics=ONE_CALL), env=FAKE_KEYS)
    assert "HTTP 400" in score_cases(scorer).questions[0].metrics["correctness"].error
    assert server.requests == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "ollama"])
def test_invalid_json_is_asked_again_once(provider, fake_judge):
    server = fake_judge(provider)
    server.queue_faults("invalid_json")
    scorer = build_judge(judge_config(provider, server, metrics=ONE_CALL), env=FAKE_KEYS)
    assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
    assert server.requests == 2


def test_a_judge_that_only_returns_invalid_json_marks_every_metric_error(fake_judge):
    server = fake_judge("openai", always_invalid_json=True)
    scorer = build_judge(judge_config("openai", server), env=FAKE_KEYS)
    record = score_cases(scorer).questions[0]
    assert record.verdict == "error"
    assert all("invalid JSON from the judge" in m.error for m in record.metrics.values())


@pytest.mark.timeout(120)  # a hang guard only: the hanging request is never answered
def test_a_hanging_call_times_out_and_is_retried(fake_judge):
    # The first request is never answered while the test runs: only the call's own time-out
    # ends it. 2 s, not less: the retry's real answer must come back within it on a busy machine.
    server = fake_judge("openai", hang_s=None)
    server.queue_faults("hang")
    scorer = build_judge(judge_config("openai", server, metrics=ONE_CALL, timeout_s=2), env=FAKE_KEYS)
    assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
    assert server.requests == 2 and [r.status for r in server.log] == [200]  # the hung one never logged


@pytest.mark.timeout(120)  # a hang guard only: no request is ever answered
def test_a_judge_that_never_answers_is_an_error_within_the_time_budget(fake_judge):
    # Every attempt hangs until the server stops: an error proves each one was cut by
    # timeout_s and the attempts bounded by max_retries, whatever the machine's speed.
    server = fake_judge("anthropic", hang_s=None)
    server.queue_faults(*["hang"] * 4)
    scorer = build_judge(
        judge_config("anthropic", server, metrics=ONE_CALL, timeout_s=0.3, max_retries=2), env=FAKE_KEYS
    )
    metric = score_cases(scorer).questions[0].metrics["correctness"]
    assert "0.3s" in metric.error  # cut by its time-out (the SDK's or rag-ci's own)
    assert "gave up after 3 attempts" in metric.error
    assert server.requests == 3 and server.log == []


def test_concurrent_judge_calls_never_exceed_the_global_limit(fake_judge):
    server = fake_judge("openai", latency_s=0.05)
    scorer = build_judge(judge_config("openai", server, concurrency=3), env=FAKE_KEYS)
    result = score_cases(scorer, n=4)
    assert all(q.verdict == "pass" for q in result.questions)
    assert server.requests == 4 * 9  # six metrics, no reason asked: all pass
    assert server.max_in_flight == 3
