"""TargetBreaker's rules (rag_ci/targets/breaker.py), on an event loop whose clock jumps from
timer to timer (tests/virtual_clock.py): when it trips, when it must not, and how it cuts the
calls in flight, to the scheduled instant, however busy the machine is."""

from __future__ import annotations

import asyncio

import pytest

from rag_ci.targets.breaker import TargetBreaker
from virtual_clock import run_on_virtual_clock


def breaker(max_wait_s: float = 0.3, max_errors_at_start: int = 100) -> TargetBreaker:
    return TargetBreaker(
        "http http://rag/query", max_wait_s=max_wait_s, max_errors_at_start=max_errors_at_start
    )


async def call(b: TargetBreaker, seconds: float, timeout_s: float = 10.0) -> str:
    """One call that takes `seconds` (or is cut): "ok", "time-out" or "cut"."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        async with b.call(timeout_s):
            await asyncio.sleep(seconds)
    except TimeoutError:
        if b.tripped:
            return "cut"
        b.failed(started, "time-out")
        return "cut" if b.tripped else "time-out"
    b.succeeded()
    return "ok"


def test_calls_failing_for_max_wait_s_trip_it_and_name_the_target_and_the_last_error():
    b = breaker(max_wait_s=0.3)

    async def outage():
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = await call(b, 60, timeout_s=0.1)
        second = await call(b, 60, timeout_s=5)
        return first, second, loop.time() - started

    first, second, seconds = run_on_virtual_clock(outage())
    assert (first, second) == ("time-out", "cut")
    # the second call ends at the outage's deadline (0.3 s after the first call began), not at its own 5 s
    assert seconds == pytest.approx(0.3, abs=0.01)
    assert b.reason.startswith(
        "target http http://rag/query stopped answering: no successful reply for 0.3 s"
    )
    assert b.reason.endswith("last error: time-out")


def test_a_success_resets_the_outage_so_a_flaky_target_that_answers_never_trips():
    async def go():
        b = breaker(max_wait_s=0.25, max_errors_at_start=2)
        results = []
        for _ in range(6):  # fail, answer, fail, answer...: 0.6 s in all, never 0.25 s without an answer
            results.append(await call(b, 60, timeout_s=0.05))
            results.append(await call(b, 0.05))
        return b, results

    b, results = run_on_virtual_clock(go())
    assert not b.tripped and results.count("ok") == 6


def test_time_with_no_call_in_flight_is_no_outage():
    """The engine may send nothing for a while (questions waiting for the judge): the outage
    starts with the first failing call sent after the last success, not at the last success."""

    async def go():
        b = breaker(max_wait_s=0.2)
        await call(b, 0.01)
        await asyncio.sleep(0.4)  # idle, longer than max_wait_s
        return b, await call(b, 60, timeout_s=0.05)

    b, outcome = run_on_virtual_clock(go())
    assert outcome == "time-out" and not b.tripped


def test_the_first_calls_all_failing_trip_it_before_max_wait_s_and_never_once_one_answered():
    async def fail_fast(b: TargetBreaker, counts: bool = True) -> None:
        b.failed(
            asyncio.get_running_loop().time(), "target answered HTTP 500: LLM API unreachable", counts=counts
        )

    async def at_start():
        b = breaker(max_wait_s=60, max_errors_at_start=3)
        for _ in range(2):
            await fail_fast(b, counts=False)  # warm-up requests: not questions
        for _ in range(3):
            await fail_fast(b)
        return b

    b = run_on_virtual_clock(at_start())
    assert b.reason.startswith(
        "target http http://rag/query stopped answering: the first 3 questions all failed"
    )
    assert b.reason.endswith("last error: target answered HTTP 500: LLM API unreachable")

    async def after_an_answer():
        b = breaker(max_wait_s=60, max_errors_at_start=3)
        b.succeeded()
        for _ in range(10):
            await fail_fast(b)
        return b

    assert not run_on_virtual_clock(after_an_answer()).tripped


def test_tripping_cuts_every_call_in_flight_at_once():
    async def go():
        b = breaker(max_wait_s=60, max_errors_at_start=1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        hanging = [asyncio.ensure_future(call(b, 60)) for _ in range(4)]
        await asyncio.sleep(0.05)
        b.failed(loop.time(), "boom")  # the first question failed: trip
        outcomes = await asyncio.gather(*hanging)
        return outcomes, loop.time() - started, b

    outcomes, seconds, b = run_on_virtual_clock(go())
    assert outcomes == ["cut"] * 4 and seconds == pytest.approx(0.05, abs=0.01)  # at the trip, not at 10 s
    assert b.not_asked_error().startswith("not asked: target http http://rag/query stopped answering")
    errors = [b.not_asked_error(), b.cut_error(), "time-out: no answer within 3s", None]
    assert b.broken_reason(errors).endswith(
        "1 of 4 questions not asked (docs/targets.md#when-the-target-stops-answering)"
    )


@pytest.mark.parametrize(
    "error, unanswered",
    [
        ("not asked: target x stopped answering", True),
        ("cut short, the run stopped asking: target x", True),
        ("time-out: no answer within 3s", False),
        (None, False),
    ],
)
def test_the_breakers_own_errors_are_recognised(error, unanswered):
    assert TargetBreaker.left_unanswered(error) is unanswered
