"""The spend cap's arithmetic: reservations, the wait for calls in flight, the stop that stays."""

import asyncio

import pytest

from rag_ci.judges.prices import Price
from rag_ci.judges.spend_cap import REPLY_TOKENS_BOUND, SpendCap, SpendCapReached, call_bound

PRICE = Price(1_000_000.0, 1_000_000.0)  # a dollar per token: bounds in whole dollars
PROMPT = "x" * 100  # 50 tokens counted high


def test_a_calls_bound_counts_its_prompt_high_and_the_longest_reply():
    assert call_bound(PRICE, PROMPT) == 50 + REPLY_TOKENS_BOUND
    assert call_bound(PRICE, "x") == 1 + REPLY_TOKENS_BOUND


def test_calls_are_reserved_until_the_next_would_pass_the_cap_and_then_none_is_made():
    bound = call_bound(PRICE, PROMPT)

    async def go():
        cap = SpendCap(cap_usd=2.5 * bound, price=PRICE)
        first = await cap.reserve(PROMPT)
        cap.settle(first, bound)  # it cost its whole bound
        second = await cap.reserve(PROMPT)
        cap.settle(second, bound)
        with pytest.raises(
            SpendCapReached, match=rf"judge stopped at \${2 * bound:.4f} of \${2.5 * bound:g}"
        ):
            await cap.reserve(PROMPT)
        with pytest.raises(SpendCapReached):  # even a smaller call: the run stops once
            await cap.reserve("x")
        return cap

    cap = asyncio.run(go())
    assert cap.spent_usd == 2 * bound and cap.reserved_usd == 0


def test_a_call_that_fits_once_the_calls_in_flight_end_waits_for_them():
    bound = call_bound(PRICE, PROMPT)

    async def go():
        cap = SpendCap(cap_usd=1.5 * bound, price=PRICE)
        in_flight = await cap.reserve(PROMPT)
        waiting = asyncio.create_task(cap.reserve(PROMPT))
        await asyncio.sleep(0)
        assert not waiting.done()  # spent 0 + reserved 1 bound + 1 bound > 1.5 bounds
        cap.settle(in_flight, 0.25 * bound)  # it cost a quarter of its bound
        return await waiting, cap

    reserved, cap = asyncio.run(go())
    assert reserved == bound and cap.stopped is None
