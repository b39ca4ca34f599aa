"""The judge client: one SDK client, one concurrency limit, retries, time-outs and cost.

`JudgeClient` owns the provider's SDK client for the whole run (created on the first
call, so a fully cached run imports no SDK), a single semaphore bounding concurrent
judge calls across all questions and metrics, the retry policy (429/5xx/time-outs,
Retry-After honoured, the slot released while sleeping), a circuit breaker and the pricing.

The circuit breaker: per-call retries alone let a judge that is down for good (429 or
500 forever) hold a run for max_retries back-offs per call, times every metric. So the
client tracks how long the judge has gone without one successful reply, across all
calls; past `max_wait_s` it gives the judge up for the rest of the run: every pending
and later call fails at once, and those metrics become `error`.
`rag_ci.judges.llm.RagCiJudgeModel` is the DeepEval-facing adapter over it.

Cost per metric: DeepEval records no cost for custom models, so each call adds its
priced tokens to the `CostMeter` found in the calling task's context; the scorer
sets a fresh meter around each metric measurement.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import itertools
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from rag_ci.judges.call_context import current_call
from rag_ci.judges.prices import Price
from rag_ci.judges.providers.base import ChatProvider, Completion
from rag_ci.judges.providers.schemas import parse_json_text
from rag_ci.judges.retry import Failure, RetryPolicy
from rag_ci.judges.spend_cap import SpendCap, SpendCapReached

# A reply that is not valid JSON for the schema is asked again this many times
# (temperature 0 often repeats itself, so more would only add cost).
INVALID_OUTPUT_RETRIES = 1


class JudgeCallError(RuntimeError):
    """The judge failed for good (after retries); the metric is marked `error`."""


class _CallerCancelled(Exception):
    """The caller sending a shared call was cancelled: its waiters ask again themselves."""


@dataclass
class JudgeStats:
    """Totals over the scorer's life, for logs and benchmarks."""

    calls: int = 0  # HTTP attempts, successful or not
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    peak_concurrency: int = 0  # highest judge.concurrency reached by adapting to rate-limit headers
    shared: int = 0  # calls answered by an identical call of this run (single flight), never sent


class PrioritySlots:
    """A semaphore whose waiters are served lowest priority value first (FIFO among equals)."""

    def __init__(self, slots: int):
        self.capacity = slots
        self._free = slots
        self._owed = 0  # slots to take out of circulation as they are released (after a shrink)
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def grow(self) -> None:
        """One slot more: handed to the first waiter, if any."""
        self.capacity += 1
        if self._owed:
            self._owed -= 1
        else:
            self.release()

    def shrink(self, slots: int) -> None:
        """Down to `slots`: free slots go at once, busy ones as their calls end."""
        while self.capacity > slots:
            self.capacity -= 1
            if self._free > 0:
                self._free -= 1
            else:
                self._owed += 1

    async def acquire(self, priority: int) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as this call was cancelled: pass it on
            raise

    def release(self) -> None:
        if self._owed:
            self._owed -= 1
            return
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # skip waiters cancelled while queued
                future.set_result(None)
                return
        self._free += 1


class JudgeClient:
    def __init__(
        self,
        provider: Callable[[], ChatProvider],
        *,
        policy: RetryPolicy,
        concurrency: int,
        price: Price,
        rng: random.Random | None = None,
        concurrency_max: int | None = None,
        role: str = "judge",
        cap: SpendCap | None = None,
        credentials_hint: str | None = None,
    ):
        self._make_provider = provider
        self.role = role  # "writer" for `questions generate`: its messages name the writer, not a judge
        self._provider: ChatProvider | None = None
        self._provider_lock = threading.Lock()
        self.policy = policy
        self.price = price
        self.stats = JudgeStats()
        self._concurrency = concurrency
        self._slots = PrioritySlots(concurrency)
        self._concurrency_max = max(concurrency, concurrency_max or concurrency)
        self._paused_until = 0.0  # loop time before which no call is sent (after a 429 with Retry-After)
        self._rng = rng or random.Random()
        self._failing_since: float | None = None  # loop time of the first failure since the last reply
        self._last_failure: Failure | None = None
        self._given_up: str | None = None  # set when the breaker trips: why every call now fails
        # Single flight: (sha256 of the prompt, reply schema) → the reply, or the future of it in flight.
        self._replies: dict[tuple[bytes, type[BaseModel] | None], asyncio.Future[Any]] = {}
        self.cap = cap  # judge.max_cost_usd (rag_ci.judges.spend_cap)
        # What to set when the provider refuses the credentials (HTTP 401/403): the run then stops
        # (exit 2) instead of marking every metric `error` with the same refusal.
        self._credentials_hint = credentials_hint
        self._refused: str | None = None

    @property
    def stopped(self) -> str | None:
        """Why this client makes no call any more and the run must stop (exit 2), or None."""
        return self._refused or (self.cap.stopped if self.cap is not None else None)

    @property
    def provider(self) -> ChatProvider:
        # Built once: the DeepEval import thread warms it up while the event loop may
        # already call (the equivalence check does not wait for DeepEval). Two builds
        # would leave one SDK client, and its open connections, that aclose never sees.
        if self._provider is None:
            with self._provider_lock:
                if self._provider is None:
                    self._provider = self._make_provider()
        return self._provider

    def warm_up(self) -> None:
        """Build the SDK client now (called from the worker thread that imports DeepEval,
        before any judge call, so the event loop never waits for it)."""
        _ = self.provider

    async def call(self, prompt: str, schema: type[BaseModel] | None, *, fresh: bool = False) -> Any:
        """The reply parsed into `schema` (or the text when no schema); raises JudgeCallError.

        Single flight: within the run an identical prompt (with the same reply schema) is
        sent once, and every caller gets that reply, callers arriving while it is in flight
        included (temperature 0: equal prompts, equal replies; `reply_key` relies on the same).
        `fresh` calls are always sent, and not shared: a confirmation re-judgement must be an
        independent draw from the judge. A call that fails is not remembered (the next
        identical prompt asks again); one whose caller is cancelled hands its waiters back to
        asking themselves.
        """
        if fresh:
            return await self._send(prompt, schema)
        key = (hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).digest(), schema)
        while (shared := self._replies.get(key)) is not None:
            try:
                reply = await asyncio.shield(shared)
            except _CallerCancelled:
                continue  # its caller went away before the reply: ask again (or wait for who does)
            self.stats.shared += 1
            return reply.model_copy(deep=True) if isinstance(reply, BaseModel) else reply
        pending: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[key] = pending
        try:
            reply = await self._send(prompt, schema)
        except BaseException as exc:
            del self._replies[key]
            pending.set_exception(_CallerCancelled() if isinstance(exc, asyncio.CancelledError) else exc)
            pending.exception()  # retrieved here: no "never retrieved" log when nobody waited
            raise
        pending.set_result(reply)
        return reply

    async def _send(self, prompt: str, schema: type[BaseModel] | None) -> Any:
        """One judge call: retries, Retry-After pauses, invalid-JSON re-asks, the breaker."""
        invalid_left = INVALID_OUTPUT_RETRIES
        told_to_wait = 0.0  # seconds this call spent waiting for a Retry-After
        attempt = 0
        while True:
            self._check_breaker()
            completion, failure = await self._attempt(prompt, schema)
            if completion is not None:
                try:
                    return _parse(completion, schema)
                except (ValueError, ValidationError) as exc:
                    failure = Failure(
                        f"invalid JSON from the {self.role} for {schema.__name__ if schema else 'a reply'}: {_first_line(exc)}",
                        retryable=invalid_left > 0,
                    )
                    if invalid_left > 0:
                        invalid_left -= 1
                        self.stats.retries += 1
                        continue
            assert failure is not None
            if failure.status == 429:
                # Back to the configured concurrency at most: the provider says the pace is too high.
                self._slots.shrink(max(self._concurrency, self._slots.capacity // 2))
            told = failure.retry_after_s
            if (
                failure.retryable
                and told is not None
                and told_to_wait + told <= self.policy.max_retry_after_s
            ):
                # A rate limit, with the time to come back: the whole client pauses until then
                # (the other calls would only collect more 429s), and the wait is not a failure,
                # so it does not use up max_retries (only waits beyond max_retry_after_s do).
                told_to_wait += told
                self._pause(told)
                self.stats.retries += 1
                continue
            attempt += 1
            delay = self.policy.delay(attempt, failure, self._rng)
            if delay is None:
                suffix = f" (gave up after {attempt} attempt{'s' if attempt > 1 else ''})"
                raise JudgeCallError(failure.message + suffix)
            self.stats.retries += 1
            await self._sleep(delay)  # outside the semaphore: a sleeping retry holds no slot

    def _pause(self, seconds: float) -> None:
        self._paused_until = max(self._paused_until, asyncio.get_running_loop().time() + seconds)

    async def _wait_if_paused(self) -> None:
        loop = asyncio.get_running_loop()
        while (wait := self._paused_until - loop.time()) > 0:
            await self._sleep(wait)

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake when the breaker is due to trip, and then trip it (raises)."""
        if self._failing_since is not None:
            due = self._failing_since + self.policy.max_wait_s - asyncio.get_running_loop().time()
            seconds = min(seconds, max(0.0, due))
        await asyncio.sleep(seconds)
        self._check_breaker()

    def _check_breaker(self) -> None:
        if self._given_up is None and self._failing_since is not None:
            if asyncio.get_running_loop().time() - self._failing_since >= self.policy.max_wait_s:
                last = self._last_failure.message if self._last_failure else "none"
                self._given_up = (
                    f"{self.role} unavailable for {self.policy.max_wait_s:g} s ({self.role}.max_wait_s): "
                    f"last error {last}; the remaining {self.role} calls of this run were not made"
                )
        if self._given_up is not None:
            raise JudgeCallError(self._given_up)

    def _record(self, failure: Failure | None) -> None:
        """Feed the breaker: any reply resets it, a failure starts (or continues) the outage."""
        if failure is None:
            self._failing_since = None
            return
        self._last_failure = failure
        if self._failing_since is None:
            self._failing_since = asyncio.get_running_loop().time()

    async def _attempt(
        self, prompt: str, schema: type[BaseModel] | None
    ) -> tuple[Completion | None, Failure | None]:
        await self._wait_if_paused()
        await self._slots.acquire(current_call().priority)
        try:
            await self._wait_if_paused()  # a 429 may have paused the client while this call queued
            self._check_breaker()  # it may have tripped while this call queued
            if self.stopped is not None:
                raise JudgeCallError(self.stopped)
            try:
                reserved = await self.cap.reserve(prompt) if self.cap is not None else 0.0
            except SpendCapReached as exc:
                raise JudgeCallError(str(exc)) from None
            self.stats.calls += 1
            try:
                # asyncio.timeout, not wait_for: no extra task (and event-loop round trip) per call.
                async with asyncio.timeout(self.policy.timeout_s):
                    completion = await self.provider.complete(prompt, schema)
            except TimeoutError:
                failure = Failure(
                    f"time-out: the {self.role} did not answer within {self.policy.timeout_s:g}s",
                    retryable=True,
                )
                self._record(failure)
                return None, failure
            except Exception as exc:
                classified = self.provider.classify(exc)
                if classified is None:
                    raise
                self._record(classified)
                self._refuse(classified)
                return None, classified
            finally:
                if self.cap is not None:  # settled again with the cost once it is known
                    self.cap.settle(reserved, 0.0)
        finally:
            self._slots.release()
        self._record(None)
        if self.cap is not None:
            self.cap.settle(0.0, self.price.cost(completion.input_tokens, completion.output_tokens))
        self._account(completion)
        self._adapt(completion)
        return completion, None

    def _refuse(self, failure: Failure) -> None:
        """A 401/403 with a credentials hint: the credentials are wrong, no later call can succeed."""
        if self._credentials_hint is not None and failure.status in (401, 403) and self._refused is None:
            self._refused = f"{self._credentials_hint} ({failure.message})"
            raise JudgeCallError(self._refused)

    @property
    def concurrency(self) -> int:
        """Judge calls allowed in flight now (grows with the provider's rate-limit headroom)."""
        return self._slots.capacity

    def _adapt(self, completion: Completion) -> None:
        """One slot more while the provider reports more than half its request budget left
        (and more than twice the calls now allowed), up to judge.concurrency_max."""
        budget = completion.rate_limit
        if budget is None or self._slots.capacity >= self._concurrency_max:
            return
        if budget.remaining * 2 > budget.limit and budget.remaining > 2 * self._slots.capacity:
            self._slots.grow()
            self.stats.peak_concurrency = max(self.stats.peak_concurrency, self._slots.capacity)

    def _account(self, completion: Completion) -> None:
        cost = self.price.cost(completion.input_tokens, completion.output_tokens)
        self.stats.input_tokens += completion.input_tokens
        self.stats.output_tokens += completion.output_tokens
        self.stats.cost_usd += cost
        meter = current_call().meter
        if meter is not None:
            meter.calls += 1
            meter.input_tokens += completion.input_tokens
            meter.output_tokens += completion.output_tokens
            meter.cost_usd += cost

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()
            self._provider = None


def _parse(completion: Completion, schema: type[BaseModel] | None) -> Any:
    if schema is None:
        return completion.text or ""
    data = completion.data if completion.data is not None else parse_json_text(completion.text)
    return schema.model_validate(data)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
