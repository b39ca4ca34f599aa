"""What a judge call belongs to: one ContextVar, the only way through DeepEval.

DeepEval calls the judge's model (rag_ci.judges.llm) with its own arguments, none of ours; what a
call belongs to travels beside it, in the calling task's context, set by whoever makes the calls:

- `meter`: the calls and cost of one metric measurement (or one writer job);
- `priority`: which answer the call serves, in the order answers reached the judge. Free slots go to
  the oldest answer's calls first, so answers finish one after the other (steady progress, a useful
  resume journal) instead of all together at the end of the run;
- `calls`: the replies of one measurement, recorded and replayed (rag_ci.judges.replies).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_ci.judges.replies import CallLog


@dataclass
class CostMeter:
    """Calls and cost of one metric measurement (mutable: the calls made in its context add up here)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class CallContext:
    meter: CostMeter | None = None
    priority: int = 0
    calls: CallLog | None = None


_current: ContextVar[CallContext] = ContextVar("rag_ci_judge_call", default=CallContext())


def current_call() -> CallContext:
    return _current.get()


@contextmanager
def judge_calls(**changes: Any) -> Iterator[None]:
    """The calls made inside belong to `changes` (meter, priority, calls); the context before, after."""
    token = _current.set(dataclasses.replace(_current.get(), **changes))
    try:
        yield
    finally:
        _current.reset(token)


def for_this_task(**changes: Any) -> None:
    """The rest of this task's calls belong to `changes` (a task's own context: nothing to restore)."""
    _current.set(dataclasses.replace(_current.get(), **changes))
