"""Judge calls below the verdict: record each measurement's replies, replay them on demand.

A DeepEval metric is a chain of judge calls (faithfulness: truths from the contexts,
claims from the answer, verdicts, a reason). Each call's reply is a pure function of
the judge and the exact prompt rendered, so a reply can stand in for the call:

- the reason pass: a verdict is first judged with `include_reason=False`; only the
  verdicts someone reads (failing or flipped) are measured again with
  `include_reason=True`, every earlier step replayed from that measurement's own
  replies: the score cannot change and the reason costs one call;
- across runs: the replies of the steps that read a single input (faithfulness'
  truths read only the contexts, its claims only the answer) travel in results.json
  (`MetricResult.judge_replies`), so a reworded answer over unchanged contexts does
  not extract the truths again.

`CallLog` travels in the judge call's context (rag_ci.judges.call_context) around one measurement, read
by `rag_ci.judges.llm.RagCiJudgeModel` on every call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.results import RunResult

# DeepEval's reply schemas of the steps whose prompt reads one input only (faithfulness'
# truths: the contexts; its claims: the answer). Only these are kept in results.json:
# the other steps read the answer *and* the contexts, which a rerun reuses only when
# both are unchanged, and then the verdict cache already answers.
PORTABLE_STEPS = frozenset({"Truths", "Claims"})
# The steps before the verdicts (what is judged: truths, claims, statements, GEval's steps). A
# confirmation replays them and asks the verdict step again: the call that decides the threshold.
EXTRACTION_STEPS = frozenset({"Truths", "Claims", "Statements", "Steps"})


def reply_key(judge_digest: str, prompt: str) -> str:
    """The judge fingerprint and the exact prompt: equal keys, equal replies (temperature 0)."""
    return "c1:" + stable_hash({"judge": judge_digest, "prompt": prompt}, 32)


class ReplayIncomplete(RuntimeError):
    """A replayed measurement needed more judge calls than it may make."""


@dataclass
class CallLog:
    """The judge calls of one measurement: replies to replay, and the replies it got."""

    judge_digest: str
    known: Mapping[str, Any] = field(default_factory=dict)  # key → reply data, served without a call
    replies: dict[str, Any] = field(default_factory=dict)  # key → reply data, every call of this measurement
    portable: dict[str, Any] = field(default_factory=dict)  # the subset worth keeping in results.json
    replayed: int = 0
    max_calls: int | None = None  # judge calls allowed beyond the replayed ones (None: any)
    calls: int = 0
    # A confirmation re-judgement: each of its calls goes to the judge, never answered by an
    # identical call of this run (JudgeClient.call's single flight), so the draw is independent.
    fresh: bool = False
    steps: dict[str, str] = field(default_factory=dict)  # key → the reply schema's name

    def before_call(self) -> None:
        """Count a call the judge must answer; raises when the measurement may make no more."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            raise ReplayIncomplete(
                f"the recorded replies do not cover this measurement ({self.calls} call(s) made)"
            )
        self.calls += 1

    def lookup(self, prompt: str, schema: type[BaseModel] | None) -> tuple[str, Any | None]:
        key = reply_key(self.judge_digest, prompt)
        if key not in self.known:
            return key, None
        self.replayed += 1
        data = self.known[key]
        self._keep(key, data, schema)
        return key, data if schema is None else schema.model_validate(data)

    def record(self, key: str, reply: Any, schema: type[BaseModel] | None) -> None:
        self._keep(key, reply.model_dump(mode="json") if isinstance(reply, BaseModel) else reply, schema)

    def extraction(self) -> dict[str, Any]:
        """The replies of this measurement's extraction steps (EXTRACTION_STEPS), by key."""
        return {key: data for key, data in self.replies.items() if self.steps.get(key) in EXTRACTION_STEPS}

    def _keep(self, key: str, data: Any, schema: type[BaseModel] | None) -> None:
        self.replies[key] = data
        if schema is not None:
            self.steps[key] = schema.__name__
        if schema is not None and schema.__name__ in PORTABLE_STEPS:
            self.portable[key] = data


def replies_from_run(run: RunResult | None) -> dict[str, Any]:
    """Every portable reply a previous run kept, by key."""
    found: dict[str, Any] = {}
    for question in run.questions if run else []:
        for metric in question.metrics.values():
            if metric.kind == "judge" and metric.error is None:
                found.update(metric.judge_replies)
    return found
