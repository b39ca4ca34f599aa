"""Judge concurrency adapts to the provider's rate-limit headers, up to judge.concurrency_max."""

import asyncio

import pytest

from fakes.judge_cases import cases, score_questions
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.judges.build import build_judge


def score(config, n=4):
    scorer = build_judge(config, env=FAKE_KEYS)

    async def go():
        try:
            return await score_questions(scorer, [(c.question, c.correct, c.contexts) for c in cases(n)])
        finally:
            await scorer.aclose()

    result = asyncio.run(go())
    assert all(q.verdict == "pass" for q in result.questions)
    return scorer


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_headroom_in_the_rate_limit_headers_raises_concurrency_up_to_the_maximum(provider, fake_judge):
    server = fake_judge(provider, latency_s=0.05, request_limit=10_000)
    scorer = score(judge_config(provider, server, concurrency=2, concurrency_max=6))
    assert 2 < server.max_in_flight <= 6
    assert scorer.client.concurrency == 6 and scorer.stats.peak_concurrency == 6


def test_a_nearly_spent_budget_keeps_the_configured_concurrency(fake_judge):
    # A budget of 8 requests for 36 calls: a slot is added only while more than half of it, and
    # more than twice the slots, are left (at most twice here), and a 429 would take them back.
    server = fake_judge("openai", latency_s=0.05, request_limit=8)
    scorer = score(judge_config("openai", server, concurrency=2, concurrency_max=6))
    assert scorer.client.concurrency <= 4
    assert server.max_in_flight <= scorer.client.concurrency


def test_without_rate_limit_headers_the_configured_concurrency_holds(fake_judge):
    server = fake_judge("openai", latency_s=0.05)
    scorer = score(judge_config("openai", server, concurrency=2, concurrency_max=6))
    assert server.max_in_flight == 2 and scorer.client.concurrency == 2
