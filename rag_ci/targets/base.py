"""The target contract (docs/targets.md): how rag-ci talks to the user's RAG.

A target receives `{"id", "question", "corpora"}` and returns the raw JSON reply;
`parse_reply` checks it against the contract. Latency, time-outs and error
capture are the runner's job, so every target stays a thin transport.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag_ci.core.base.value_words import described
from rag_ci.core.results import Context, Usage
from rag_ci.errors import TargetError

# The ids of the unscored warm-up requests sent before the questions (target.warmup):
# `rag-ci-warmup-1`, `rag-ci-warmup-2`... with the first questions' text and corpora.
WARMUP_ID_PREFIX = "rag-ci-warmup-"
# The reply's key under which a traced target (rag_ci.targets.traces) hands over the stage times.
STAGES_KEY = "rag_ci_stages"


@dataclass(frozen=True)
class ArrivedReply:
    """A reply with the moment it arrived (time.perf_counter), from a target that checks a reply
    for a while after it arrived (a command target waits for a second line): the runner's
    latency ends at `arrived_at`, not when the check is over."""

    reply: dict[str, Any]
    arrived_at: float


def shown_id(value: Any) -> str:
    """An id a target echoed, as messages show it: a string as `'Q1'`, any other JSON value with
    its type (`the number 1`), so that 1 and "1" never read the same."""
    return repr(value[:80]) if isinstance(value, str) else described(value)


def another_type_of(echoed: Any, asked: str) -> str:
    """Why an echoed id that reads like the asked one is not it: ``: the number 1, not the string
    "1" (…)``; "" when the two differ otherwise."""
    if isinstance(echoed, str) or asked not in (str(echoed), json.dumps(echoed)):
        return ""
    return f": {described(echoed)}, not {described(asked)} (echo the id as it was sent, a string)"


def wrong_id(echoed: Any, asked: str) -> str:
    """A lock-step reply whose id is not the asked one, in words."""
    return f"reply for id {shown_id(echoed)} while {asked!r} was asked{another_type_of(echoed, asked)}"


def arrived(raw: dict[str, Any] | ArrivedReply) -> tuple[dict[str, Any], float]:
    """A target's reply and the moment it arrived (now, for a target that says nothing of it)."""
    if isinstance(raw, ArrivedReply):
        return raw.reply, raw.arrived_at
    return raw, time.perf_counter()


@runtime_checkable
class Target(Protocol):
    """A started RAG that answers one request at a time per call (calls may overlap)."""

    # At most this many calls at once (a command target's worker processes), or None when the
    # target takes as many as `target.concurrency` allows: the engine never sends more, so the
    # latency measured excludes queueing inside the target. Read-only here: a command target
    # widens it once its replies carry ids (the engine then widens its slots).
    @property
    def max_parallel(self) -> int | None: ...

    async def start(self) -> None:
        """Launch and wait until ready. Raise TargetError when it cannot start."""

    async def query(self, request: dict[str, Any]) -> dict[str, Any] | ArrivedReply:
        """Send one request, return the decoded JSON reply (with the moment it arrived, when the
        target checked it for a while after). Raise TargetError on failure."""

    async def stop(self) -> None:
        """Release everything (processes, containers). Safe to call twice."""

    def diagnostics(self) -> str:
        """The last lines of the target's stderr or logs, for the report."""


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    answer: str
    contexts: list[Context] = Field(default_factory=list)
    usage: Usage | None = None
    # seconds per stage, set from the RAG's spans (rag_ci.targets.traces), under a name of
    # rag-ci's own: a RAG's reply of its own "stages" is not read (nor refused)
    stages: dict[str, float] = Field(default_factory=dict, alias="rag_ci_stages")  # STAGES_KEY


@dataclass(frozen=True)
class TargetReply:
    answer: str
    contexts: tuple[Context, ...]
    usage: Usage | None
    stages: tuple[tuple[str, float], ...] = ()


def parse_reply(raw: Any) -> TargetReply:
    """Validate a reply against the contract; a malformed one raises TargetError."""
    if not isinstance(raw, dict):
        raise TargetError(f"malformed response: expected a JSON object, got {type(raw).__name__}")
    if "error" in raw and "answer" not in raw:
        raise TargetError(f"target reported an error: {str(raw['error'])[:300]}")
    try:
        reply = _Reply.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        got = f" (got {first['input']!r:.80})" if isinstance(first.get("input"), (int, float)) else ""
        raise TargetError(f"malformed response: {field}: {first['msg']}{got}") from None
    return TargetReply(
        answer=reply.answer,
        contexts=tuple(reply.contexts),
        usage=reply.usage,
        stages=tuple(reply.stages.items()),
    )
