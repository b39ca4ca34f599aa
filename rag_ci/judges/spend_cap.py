"""The spend cap (`judge.max_cost_usd`, `writer.max_cost_usd`): no call that could take the cost past it.

`gate.budgets.judge_cost_usd` fails a check after the money is spent; the cap stops the calls.
Before each call the client reserves the call's upper bound (its prompt's tokens, counted high,
and the longest reply a judge writes, at the model's price) on top of what was spent and what
the calls in flight reserved; a call whose bound does not fit is not made, and from then on no
call is (a run that stops at its cap stops once, not in a trickle of the smaller calls). When a
call ends its reservation is replaced by its real cost.

The bound is an estimate made high on purpose: a tokenizer makes about one token of four
characters of English; counting one of every two keeps a prompt of code or of another script
under its bound too.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from rag_ci.judges.prices import Price

CHARS_PER_TOKEN_LOW = 2  # one token per this many characters: a high count of a prompt's tokens
REPLY_TOKENS_BOUND = 1024  # a metric's reply (verdicts, a reason) is far shorter


class SpendCapReached(RuntimeError):
    """The next call does not fit under the cap: the caller's metric is not evaluated."""


def call_bound(price: Price, prompt: str) -> float:
    """The most one call with `prompt` may cost, in US dollars."""
    return price.cost(math.ceil(len(prompt) / CHARS_PER_TOKEN_LOW), REPLY_TOKENS_BOUND)


@dataclass
class SpendCap:
    cap_usd: float
    price: Price
    role: str = "judge"  # "writer": the setting is `writer.max_cost_usd`
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    stopped: str | None = field(default=None)  # why no call is made any more
    _settled: asyncio.Event | None = field(default=None, repr=False)

    async def reserve(self, prompt: str) -> float:
        """Reserve the call's bound, or raise SpendCapReached (and stop every later call).

        A call that would fit but for the calls in flight waits for them to end: they may cost
        less than they reserved."""
        while self.stopped is None:
            bound = call_bound(self.price, prompt)
            if self.spent_usd + self.reserved_usd + bound <= self.cap_usd:
                self.reserved_usd += bound
                return bound
            if self.spent_usd + bound > self.cap_usd or self.reserved_usd <= 0:
                self.stopped = stop_message(self.role, self.spent_usd, self.cap_usd)
                break
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()
        raise SpendCapReached(self.stopped)

    def settle(self, reserved: float, cost: float) -> None:
        """The call ended: its reservation gives way to what it cost (0 when it failed)."""
        self.reserved_usd = max(0.0, self.reserved_usd - reserved)
        self.spent_usd += cost
        if self._settled is not None:  # wake the calls waiting for room, once
            self._settled.set()
            self._settled = None


def stop_message(role: str, spent: float, cap: float) -> str:
    return (
        f"{role} stopped at ${spent:.4f} of ${cap:g}: raise {role}.max_cost_usd or run on fewer questions; "
        f"--resume continues"
    )


# Judge calls one measurement makes (DeepEval 4.3.1, reasons not asked): faithfulness extracts
# truths and claims then judges them, relevancy extracts statements then judges them.
CALLS_PER_METRIC = {"FaithfulnessMetric": 3, "AnswerRelevancyMetric": 2}
# What a prompt holds besides the question and its reference: DeepEval's template, the answer
# and the retrieved contexts (unknown before the target answers), counted high.
PROMPT_CHARS_BESIDES_QUESTION = 12_000


def estimate_usd(price: Price, work: list[tuple[str, list[str]]]) -> tuple[float, int]:
    """(upper cost, calls) of judging `work`: each question's text and reference, and the
    DeepEval classes of the metrics it needs judged (those its baseline may serve left out)."""
    total, calls = 0.0, 0
    for text, classes in work:
        one = call_bound(price, "x" * (PROMPT_CHARS_BESIDES_QUESTION + len(text)))
        for name in classes:
            n = CALLS_PER_METRIC.get(name, 1)
            total += n * one
            calls += n
    return total, calls


def estimate_line(role: str, cap: float, cost: float, calls: int, questions: int, cached: int) -> str:
    return (
        f"[rag-ci] {role} cost estimate: up to ${cost:.4f} for {calls} calls on {questions} question(s)"
        f"{f' ({cached} verdict(s) the baseline may serve left out)' if cached else ''}; "
        f"cap ${cap:g} ({role}.max_cost_usd)"
    )
