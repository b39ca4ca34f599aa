"""A question's time-out covers the target's answer, not rag-ci's reading of it.

The time-out (rag_ci.targets.breaker.TargetBreaker.call) runs from the request to the reply's
last byte. Checking and parsing the reply come after, and take rag-ci's time: a 50 MB reply
that arrived in 1.7 s was still being checked when `timeout_s: 5` ran out, and the question
was recorded as a time-out of a target that had answered. A target calls `reply_arrived()`
once its reply is all there (a stdout line read whole, an HTTP body received) and that line
decides the question, whatever it holds: the clock of the call in progress stops.

The call's clock is found through a context variable: the target's code runs in the task
of the question (asyncio.timeout, no extra task), so the variable is that question's.
Code in another task (the router of by_id.py, which decodes on the event loop, where no
time-out fires meanwhile) leaves it alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_STOP_CLOCK: ContextVar[Callable[[], None] | None] = ContextVar("rag_ci_stop_clock", default=None)


def reply_arrived() -> None:
    """The reply of the call in progress in this task is all here: its time-out stops."""
    stop = _STOP_CLOCK.get()
    if stop is not None:
        stop()


@contextlib.contextmanager
def clock_stopped_by(stop: Callable[[], None]) -> Iterator[None]:
    """Within this block, `reply_arrived()` calls `stop` (the time-out's owner says how)."""
    token = _STOP_CLOCK.set(stop)
    try:
        yield
    finally:
        _STOP_CLOCK.reset(token)
