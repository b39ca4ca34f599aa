"""The target's circuit breaker: a RAG that stops answering ends the run in seconds.

Without it, a target whose every call hangs (its LLM API is down) costs one time-out
per question, and every question that passed on the baseline is re-asked on top: 30
questions at `timeout_s: 60` held a run for 28 minutes before it was declared broken.

The breaker watches every target call (warm-up included) and trips when either
* no call has succeeded for `target.max_wait_s` while calls were failing (default: three
  time-outs' worth), counted from the start of the first failing call after the last
  success — so time spent with no call in flight (waiting for the judge) is no outage; or
* the first `target.max_errors_at_start` questions all failed, before any success (a
  target that errors at once, e.g. HTTP 500 from a dead backend, trips in a second;
  warm-up requests and re-asks are not counted).

Warm-up requests are not watched at all (the engine never reports them): they are
unscored, and a target that hangs on them alone must not end a run before its first
question is asked — the first real question decides.

Once tripped, calls in flight are cut at once (their time-outs are rescheduled to now,
no extra task per call), nothing more is sent — no question, no re-ask, hence no process
restart — and `reason` names the target and its last error; the engine marks the
questions left `error` and the run broken (exit 2).

How the time rule trips without a call completing: while calls fail, every call's
time-out is brought forward to the outage's deadline (`failing_since + max_wait_s`),
and moved back when a call succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from rag_ci.targets.reply_clock import clock_stopped_by

# A call's time-out brought forward to the breaker's deadline fires a hair early or late
# on the loop's clock; this much slack decides it in favour of tripping.
_SLACK_S = 1e-3
_NOT_ASKED = "not asked: "
_CUT_SHORT = "cut short, the run stopped asking: "


class TargetBreaker:
    def __init__(self, target: str, *, max_wait_s: float, max_errors_at_start: int):
        self.target = target  # how the messages name it: "command `python rag/server.py`"
        self.max_wait_s = max_wait_s
        self.max_errors_at_start = max_errors_at_start
        self.reason: str | None = None  # set when tripped
        self._answered = False  # any call has succeeded
        self._errors_at_start = 0
        self._last_success: float | None = None
        self._failing_since: float | None = None
        self._last_error = "none"
        self._calls: dict[asyncio.Timeout, float] = {}  # in-flight call -> its own deadline

    @property
    def tripped(self) -> bool:
        return self.reason is not None

    @property
    def answered(self) -> bool:
        """Has any watched call succeeded yet? (Before that, a time-out may be a cold start.)"""
        return self._answered

    @contextlib.asynccontextmanager
    async def call(self, timeout_s: float) -> AsyncIterator[None]:
        """Bound one target call by `timeout_s` and by the breaker (TimeoutError for both), until
        its reply has arrived (`reply_clock.reply_arrived`). The caller reports the outcome with
        `succeeded` or `failed`."""
        loop = asyncio.get_running_loop()
        own = loop.time() + timeout_s
        async with asyncio.timeout_at(self._when(own)) as scope:
            self._calls[scope] = own

            def arrived() -> None:  # the reply is here: reading it is rag-ci's time (reply_clock.py)
                if self._calls.pop(scope, None) is not None and not scope.expired():
                    scope.reschedule(None)

            try:
                with clock_stopped_by(arrived):
                    yield
            finally:
                self._calls.pop(scope, None)

    def succeeded(self) -> None:
        self._answered = True
        self._last_success = asyncio.get_running_loop().time()
        if self._failing_since is not None:  # time-outs brought forward by the outage go back to their own
            self._failing_since = None
            self._reschedule()

    def failed(self, started: float, error: str, *, counts: bool = True, cut: bool = False) -> None:
        """A call that began at loop time `started` failed with `error`: maybe trip.
        `counts=False` (a warm-up request) keeps it out of the errors-at-start count;
        `cut`: the breaker's own deadline ended it, so an earlier error says more."""
        if self.tripped:
            return
        now = asyncio.get_running_loop().time()
        if not cut or self._last_error == "none":
            self._last_error = " ".join(error.split())[:300]
        if self._failing_since is None:
            # The outage began no later than this call was sent, and after the last success.
            self._failing_since = max(started, self._last_success or started)
        if counts and not self._answered:
            self._errors_at_start += 1
        if now - self._failing_since + _SLACK_S >= self.max_wait_s:
            waited = now - self._failing_since
            shown = f"{waited:.0f}" if waited >= 10 else f"{waited:.1f}"
            self._trip(f"no successful reply for {shown} s (target.max_wait_s: {self.max_wait_s:g})")
        elif not self._answered and self._errors_at_start >= self.max_errors_at_start:
            self._trip(
                f"the first {self._errors_at_start} questions all failed (target.max_errors_at_start: "
                f"{self.max_errors_at_start})"
            )
        else:
            self._reschedule()

    def not_asked_error(self) -> str:
        return f"{_NOT_ASKED}{self.reason}"

    def cut_error(self) -> str:
        return f"{_CUT_SHORT}{self.reason}"

    @staticmethod
    def left_unanswered(error: str | None) -> bool:
        """Did the breaker keep this question from its answer?"""
        return error is not None and error.startswith((_NOT_ASKED, _CUT_SHORT))

    def broken_reason(self, errors: list[str | None]) -> str | None:
        """The run's `meta.broken` once tripped (`errors`: each question's): which target,
        its last error, how many questions were not asked."""
        if not self.tripped:
            return None
        not_asked = sum(1 for e in errors if e is not None and e.startswith(_NOT_ASKED))
        return (
            f"{self.reason}; {not_asked} of {len(errors)} questions not asked "
            "(docs/targets.md#when-the-target-stops-answering)"
        )

    def _trip(self, why: str) -> None:
        self.reason = f"target {self.target} stopped answering: {why}; last error: {self._last_error}"
        now = asyncio.get_running_loop().time()
        for scope in self._calls:
            if not scope.expired():
                scope.reschedule(now)

    def _when(self, own: float) -> float:
        if self.tripped:
            return asyncio.get_running_loop().time()
        if self._failing_since is None:
            return own
        return min(own, self._failing_since + self.max_wait_s)

    def _reschedule(self) -> None:
        for scope, own in self._calls.items():
            if not scope.expired():
                scope.reschedule(self._when(own))
