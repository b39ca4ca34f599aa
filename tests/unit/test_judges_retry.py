"""Retry policy: Retry-After honoured, exponential back-off otherwise, quotas not waited out."""

import random

from rag_ci.judges.retry import Failure, RetryPolicy, is_retryable_status, parse_retry_after


def test_retry_after_in_seconds_milliseconds_and_http_date():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = "Wed, 21 Oct 2015 07:28:30 GMT"
    now = 1445412480.0  # 07:28:00 that day
    assert parse_retry_after({"Retry-After": date}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_a_retry_after_is_waited_exactly():
    policy = RetryPolicy(max_retries=3)
    assert policy.delay(1, Failure("429", True, 429, retry_after_s=2.5), random.Random(0)) == 2.5


def test_backoff_doubles_with_jitter_and_is_capped():
    policy = RetryPolicy(max_retries=10, backoff_s=1.0, max_backoff_s=4.0)
    rng = random.Random(1)
    failure = Failure("500", True, 500)
    delays = [policy.delay(n, failure, rng) for n in (1, 2, 3, 4, 5)]
    assert 0.5 <= delays[0] <= 1.0
    assert 1.0 <= delays[1] <= 2.0
    assert 2.0 <= delays[2] <= 4.0
    assert all(d <= 4.0 for d in delays[3:])


def test_gives_up_after_max_retries_on_permanent_errors_and_on_long_quotas():
    policy = RetryPolicy(max_retries=2, max_retry_after_s=60)
    rng = random.Random(0)
    assert policy.delay(3, Failure("500", True, 500), rng) is None
    assert policy.delay(1, Failure("401", False, 401), rng) is None
    assert policy.delay(1, Failure("429", True, 429, retry_after_s=3600), rng) is None


def test_retryable_statuses():
    assert all(is_retryable_status(s) for s in (429, 500, 502, 503, 504, 529))
    assert not any(is_retryable_status(s) for s in (400, 401, 403, 404, 422, None))


def test_priority_slots_grow_and_shrink_without_losing_or_leaking_a_slot():
    import asyncio

    from rag_ci.judges.client import PrioritySlots

    async def go():
        slots = PrioritySlots(2)
        await slots.acquire(0)
        await slots.acquire(0)
        waiter = asyncio.ensure_future(slots.acquire(0))
        await asyncio.sleep(0)
        assert not waiter.done()
        slots.grow()  # the new slot goes to the waiter
        await asyncio.sleep(0)
        assert waiter.done() and slots.capacity == 3
        slots.shrink(1)  # all three busy: two are taken back as they are released
        slots.release()
        slots.release()
        late = asyncio.ensure_future(slots.acquire(0))
        await asyncio.sleep(0)
        assert not late.done()  # one call still holds the only slot
        slots.release()
        await asyncio.sleep(0)
        assert late.done()

    asyncio.run(go())
