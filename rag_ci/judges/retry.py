"""Retries for judge calls: exponential back-off on 429/5xx/time-outs, honouring Retry-After.

DeepEval's own retry (tenacity, 2 attempts by default, Retry-After ignored) is not
used: rag-ci's judge adapters turn the SDKs' retries off and retry here, so every
provider behaves the same and a rate-limited call gives its concurrency slot back
while it sleeps.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    """A provider error, classified. `retryable` errors are retried; others fail the metric."""

    message: str
    retryable: bool
    status: int | None = None
    retry_after_s: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    backoff_s: float = 0.5  # first back-off; doubles per retry
    max_backoff_s: float = 30.0
    # A Retry-After longer than this is a quota, not a blip: fail instead of stalling the run.
    max_retry_after_s: float = 120.0
    timeout_s: float = 60.0  # per call
    # Circuit breaker: after this long without one successful reply (any call), give the judge up.
    max_wait_s: float = 300.0

    def delay(self, attempt: int, failure: Failure, rng: random.Random) -> float | None:
        """Seconds to wait before retry number `attempt` (1-based), or None to give up."""
        if not failure.retryable or attempt > self.max_retries:
            return None
        if failure.retry_after_s is not None:
            if failure.retry_after_s > self.max_retry_after_s:
                return None
            return max(0.0, failure.retry_after_s)
        ceiling = min(self.max_backoff_s, self.backoff_s * (2 ** (attempt - 1)))
        # Jitter in [ceiling/2, ceiling]: spreads concurrent retries without losing the back-off.
        return ceiling * (0.5 + rng.random() / 2)


RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def is_retryable_status(status: int | None) -> bool:
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds from `retry-after-ms` (OpenAI) or `Retry-After` (seconds or HTTP date)."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
