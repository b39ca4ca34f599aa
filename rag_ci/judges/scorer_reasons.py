"""DeepEval's reason for a failing verdict, asked only when a report of this run prints it.

The scorer measures with `include_reason=False` (the reason is DeepEval's last call and does
not change the score); `explain`, once the engine has the question's whole record, asks it for
the one failing verdict the comparison with the baseline explains, every step replayed from its
own replies, so it costs one call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_ci.core.comparison.question_change import reasons_shown
from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import Context, MetricResult, QuestionResult
from rag_ci.judges.call_context import for_this_task
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.replies import CallLog

if TYPE_CHECKING:
    from rag_ci.judges.confirmation import Measurement as _Measurement


class ReasonExplaining:
    """The part of `DeepEvalJudgeScorer` (rag_ci.judges.scorer) that asks failing verdicts' reasons."""

    specs: dict[str, JudgeMetricSpec]
    _unexplained: dict[tuple[str, str, str], Unexplained]
    _questions: dict[str, tuple[Question, int]]

    if TYPE_CHECKING:

        async def _judge(
            self,
            spec: JudgeMetricSpec,
            case: tuple[Question, str, list[Context]],
            key: str,
            *,
            known: Mapping[str, Any],
            include_reason: bool = False,
            fresh: bool = False,
        ) -> _Measurement: ...

    async def explain(self, record: QuestionResult, baseline: QuestionResult | None) -> QuestionResult:
        """`record` with DeepEval's reason on the failing verdicts its comparison with `baseline`
        prints (`rag_ci.core.comparison.question_change.reasons_shown`); never raises.

        A failing verdict whose reason no report of this run prints keeps every reply of its
        measurement in results.json instead, so a later run that prints it (a worse question
        reusing it from the verdict cache) asks the reason then, for one call.
        """
        unexplained = {
            (name, key): entry for (qid, name, key), entry in self._unexplained.items() if qid == record.id
        }
        for name, key in unexplained:
            del self._unexplained[(record.id, name, key)]
        question, priority = self._questions.pop(record.id, (None, 0))
        shown = reasons_shown(baseline, record) if record.metrics else frozenset()
        if any(m.kind == "judge" and m.passed is False and m.reason for m in record.metrics.values()):
            shown = frozenset()  # a failing verdict says why already (GEval's comes with its score)
        wanted: dict[str, Any] = {}
        updates: dict[str, MetricResult] = {}
        for name, metric in record.metrics.items():
            if metric.kind != "judge" or not reason_may_be_read(metric):
                continue
            entry = unexplained.get((name, metric.cache_key or ""))  # judge metrics carry their key
            # One reason per question: the report says why the question fails with one failing
            # metric's reason (the others read "failed", their replies kept for a later run).
            if name in shown and not wanted:
                if entry is not None:
                    wanted[name] = self._add_reason(entry.spec, entry.case, entry.log.replies, metric)
                elif (
                    question is not None
                    and metric.cached
                    and not metric.equivalent_answer
                    and name in self.specs
                    and metric.judge_replies
                ):
                    # From the verdict cache, judged on this very answer: its recorded replies replay it.
                    case = (question, record.answer or "", list(record.contexts))
                    wanted[name] = self._add_reason(self.specs[name], case, metric.judge_replies, metric)
            elif entry is not None:
                updates[name] = metric.model_copy(update={"judge_replies": dict(entry.log.replies)})
        if wanted:
            for_this_task(priority=priority)  # the answer's own turn: it completes before later answers
            explained = await asyncio.gather(*wanted.values())
            updates.update(zip(wanted, explained))
        if not updates:
            return record
        return record.model_copy(update={"metrics": {**record.metrics, **updates}})

    async def _add_reason(
        self,
        spec: JudgeMetricSpec,
        case: tuple[Question, str, list[Context]],
        replies: Mapping[str, Any],
        decided: MetricResult,
    ) -> MetricResult:
        """The same measurement with DeepEval's reason: its steps replayed, one call for the reason."""
        again = await self._judge(spec, case, decided.cache_key or "", known=replies, include_reason=True)
        if again.result.error is not None or again.result.score != decided.score:
            return decided  # the verdict stands without its explanation
        return decided.model_copy(
            update={
                "reason": again.result.reason,
                "judge_cost_usd": round(decided.judge_cost_usd + again.result.judge_cost_usd, 8),
            }
        )


@dataclass(frozen=True)
class Unexplained:
    """A failing verdict scored without its reason: what replays its measurement."""

    spec: JudgeMetricSpec
    case: tuple[Question, str, list[Context]]
    log: CallLog


def reason_may_be_read(result: MetricResult) -> bool:
    """Reports print the reasons of failing verdicts only (and not all of them: `explain`)."""
    return (
        result.error is None and result.reason is None and result.score is not None and result.passed is False
    )
