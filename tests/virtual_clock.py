"""An event loop whose clock moves only when the loop would wait, for tests of timing rules.

`run_on_virtual_clock(coro)` runs a coroutine as `asyncio.run` does, on a loop whose
`time()` starts at 0 and jumps straight to the next timer whenever nothing is ready: a
5 s `asyncio.sleep` or time-out ends at once, with `loop.time()` exactly 5 s later. What the
code under test reads from the clock is then what it scheduled, on an idle machine or a busy
one. Only for code that waits on timers alone (no sockets, subprocesses or threads): those
would answer in real time, while the clock runs ahead without them.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any


class _TimeTravellingSelector(selectors.DefaultSelector):
    def __init__(self, loop: VirtualClockLoop):
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list:
        if timeout is None:  # no timer at all: only something outside could wake the loop
            return super().select(None)
        events = super().select(0)
        if not events:
            self._loop.advance(timeout)
        return events


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(_TimeTravellingSelector(self))

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)


def run_on_virtual_clock(coro: Coroutine[Any, Any, Any]) -> Any:
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(coro)
