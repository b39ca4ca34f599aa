"""Single flight: within a run an identical prompt to the judge is sent once.

The provider here is a fake at the outer edge (an in-memory ChatProvider that answers
after a delay and counts what it was sent); everything between it and the caller is
rag-ci's real JudgeClient.
"""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from rag_ci.judges.client import JudgeCallError, JudgeClient
from rag_ci.judges.prices import Price
from rag_ci.judges.providers.base import Completion
from rag_ci.judges.retry import Failure, RetryPolicy


class Verdict(BaseModel):
    verdicts: list[str]


class CountingProvider:
    """Answers every prompt with the same JSON after `delay_s`; fails the first `failures` calls."""

    def __init__(self, delay_s: float = 0.05, failures: int = 0):
        self.delay_s = delay_s
        self.failures = failures
        self.sent: list[str] = []

    async def complete(self, prompt: str, schema) -> Completion:
        self.sent.append(prompt)
        await asyncio.sleep(self.delay_s)
        if self.failures:
            self.failures -= 1
            raise ValueError("bad request")
        return Completion(text='{"verdicts": ["yes"]}', input_tokens=10, output_tokens=3)

    def classify(self, exc: BaseException) -> Failure | None:
        return Failure(str(exc), retryable=False) if isinstance(exc, ValueError) else None

    async def aclose(self) -> None:
        return None


def client_for(provider: CountingProvider) -> JudgeClient:
    return JudgeClient(lambda: provider, policy=RetryPolicy(), concurrency=8, price=Price(0, 0))


def test_identical_prompts_in_flight_at_once_are_sent_once_and_share_the_reply():
    provider = CountingProvider()
    client = client_for(provider)

    async def go():
        return await asyncio.gather(*(client.call("the same prompt", Verdict) for _ in range(5)))

    replies = asyncio.run(go())
    assert provider.sent == ["the same prompt"]
    assert all(r == Verdict(verdicts=["yes"]) for r in replies)
    assert len({id(r) for r in replies}) == 5  # each caller its own copy: a metric may change its reply
    assert client.stats.calls == 1 and client.stats.shared == 4


def test_a_prompt_answered_earlier_in_the_run_is_not_sent_again_and_another_prompt_or_schema_is():
    provider = CountingProvider(delay_s=0)
    client = client_for(provider)

    async def go():
        await client.call("prompt A", Verdict)
        await client.call("prompt A", Verdict)
        await client.call("prompt B", Verdict)
        await client.call("prompt A", None)  # another reply schema: another call

    asyncio.run(go())
    assert provider.sent == ["prompt A", "prompt B", "prompt A"]


def test_fresh_calls_are_always_sent_so_a_confirmation_is_an_independent_draw():
    provider = CountingProvider(delay_s=0)
    client = client_for(provider)

    async def go():
        await client.call("prompt", Verdict)
        await client.call("prompt", Verdict, fresh=True)
        await asyncio.gather(
            client.call("prompt", Verdict, fresh=True), client.call("prompt", Verdict, fresh=True)
        )

    asyncio.run(go())
    assert len(provider.sent) == 4


def test_a_failed_call_is_not_remembered_the_next_identical_prompt_asks_again():
    provider = CountingProvider(delay_s=0.02, failures=1)
    client = client_for(provider)

    async def go():
        first = await asyncio.gather(
            client.call("prompt", Verdict), client.call("prompt", Verdict), return_exceptions=True
        )
        again = await client.call("prompt", Verdict)
        return first, again

    first, again = asyncio.run(go())
    # the waiter shares the failure of the call it waited for
    assert all(isinstance(r, JudgeCallError) for r in first)
    assert again == Verdict(verdicts=["yes"])
    assert len(provider.sent) == 2


def test_when_the_caller_sending_a_shared_call_is_cancelled_its_waiter_asks_itself():
    provider = CountingProvider(delay_s=0.1)
    client = client_for(provider)

    async def go():
        owner = asyncio.create_task(client.call("prompt", Verdict))
        await asyncio.sleep(0.02)
        waiter = asyncio.create_task(client.call("prompt", Verdict))
        await asyncio.sleep(0.02)
        owner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await owner
        return await waiter

    assert asyncio.run(go()) == Verdict(verdicts=["yes"])
    assert len(provider.sent) == 2
