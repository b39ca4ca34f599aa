"""The DeepEval metrics rag-ci judges with, and what each one reads.

Four RAG metrics (faithfulness, answer relevancy, contextual precision and recall)
and two binary GEval metrics (correctness, completeness, `strict_mode=True`). The
GEval metrics get fixed evaluation steps instead of a criteria DeepEval would
expand into steps with an extra, noisy judge call per case; the steps are part of
the judge fingerprint.

A `JudgeMetricSpec` says which inputs the metric reads (the verdict cache keys on
exactly those) and when it applies: metrics that need a reference are skipped
for questions without one; answer relevancy and the contextual metrics are
skipped for `expect: refusal` questions, where "not in the documents" is the
right answer and there is no relevant context to rank.

Two conversation-level metrics, opt-in (knowledge retention, conversation completeness), judge
a conversation's last turn with the whole conversation (DeepEval's ConversationalTestCase:
rag_ci.judges.conversational).

Importing this module does not import DeepEval; `build()` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_ci.core.config import JUDGE_METRICS, MetricConfig
from rag_ci.core.questionset.questions import Question, TurnQuestion

CORRECTNESS_STEPS = (
    "Compare every fact, number, unit, name and condition stated in the Actual Output with the Expected Output.",
    "The Actual Output is correct when nothing in it contradicts the Expected Output; an answer that is "
    "incomplete but states nothing wrong is still correct, and extra details are fine unless they contradict it.",
    "If the Expected Output says the answer is not in the documents, the Actual Output is correct only if it "
    "says the information is not available in the documents (or declines to answer) instead of inventing one.",
    "Score 1 when the Actual Output is correct by these rules, otherwise 0.",
)
COMPLETENESS_STEPS = (
    "List the facts, numbers, units, names and conditions in the Expected Output that are needed to answer the Input.",
    "Check that each of them is present in the Actual Output; paraphrases count, missing or wrong ones do not.",
    "If the Expected Output says the answer is not in the documents, a response saying the information is not "
    "available in the documents is complete.",
    "Score 1 when every needed item is present, otherwise 0.",
)
# The expected output given to the judge for `expect: refusal` questions without a reference.
REFUSAL_REFERENCE = (
    "The documents do not contain the answer to this question. A correct response says that the information "
    "is not in the documents (or declines to answer) and does not invent an answer."
)

# The conversation-level metrics (opt-in): DeepEval's class of each.
CONVERSATIONAL = {
    "knowledge_retention": "KnowledgeRetentionMetric",
    "conversation_completeness": "ConversationCompletenessMetric",
}

# DeepEval's fallback threshold when rag-ci's is None (informative metric: `passed` stays None).
_DEEPEVAL_DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class JudgeMetricSpec:
    name: str
    deepeval_class: str
    threshold: float | None
    uses_answer: bool
    uses_contexts: bool
    needs_reference: bool
    for_refusals: bool
    strict: bool = False
    evaluation_steps: tuple[str, ...] = ()
    criteria: str | None = None
    # Judged on a whole conversation (DeepEval's ConversationalTestCase), at its last turn only.
    conversational: bool = False

    def applies_to(self, question: Question) -> bool:
        if self.conversational:
            return isinstance(question, TurnQuestion) and question.last
        if question.is_refusal:
            return self.for_refusals
        return not self.needs_reference or bool(question.reference)

    def identity(self) -> dict[str, Any]:
        """Everything that changes this metric's verdicts: part of the fingerprint and cache keys."""
        entry: dict[str, Any] = {
            "class": self.deepeval_class,
            "threshold": self.threshold,
            "strict": self.strict,
            # The reason's wording, not the score: rag-ci scores without it and writes it for the
            # verdicts a report shows (kept here so fingerprints of existing baselines still match).
            "include_reason": True,
            "eval_mode": "llm",
        }
        if self.deepeval_class == "GEval":
            entry["criteria"] = self.criteria
            entry["evaluation_steps"] = list(self.evaluation_steps)
            entry["evaluation_params"] = ["input", "actual_output", "expected_output"]
            entry["refusal_reference"] = REFUSAL_REFERENCE
        return entry

    def build(self, model: Any, *, include_reason: bool = True) -> Any:
        """A fresh DeepEval metric instance (metrics keep per-case state: never share one).

        `include_reason` only adds DeepEval's last call (the reason, written from the
        score and the verdicts); it never changes the score. GEval writes its reason in
        its one scoring call and has no such switch.
        """
        import deepeval.metrics as dm
        from deepeval.test_case import SingleTurnParams

        threshold = self.threshold if self.threshold is not None else _DEEPEVAL_DEFAULT_THRESHOLD
        if self.deepeval_class == "GEval":
            return dm.GEval(
                name=self.name,
                evaluation_params=[
                    SingleTurnParams.INPUT,
                    SingleTurnParams.ACTUAL_OUTPUT,
                    SingleTurnParams.EXPECTED_OUTPUT,
                ],
                evaluation_steps=list(self.evaluation_steps),
                model=model,
                threshold=threshold,
                strict_mode=self.strict,
                async_mode=True,
            )
        cls = getattr(dm, self.deepeval_class)
        # eval_mode pinned to "llm": a DEEPEVAL_EVAL_MODE in the environment must not change the judge.
        return cls(
            model=model,
            threshold=threshold,
            include_reason=include_reason,
            async_mode=True,
            strict_mode=self.strict,
            eval_mode="llm",
        )


def _geval(name: str, cfg: MetricConfig, default_steps: tuple[str, ...]) -> JudgeMetricSpec:
    # A user's criteria becomes the single evaluation step (no extra steps-generation call).
    steps = (cfg.criteria,) if cfg.criteria else default_steps
    return JudgeMetricSpec(
        name,
        "GEval",
        cfg.threshold,
        uses_answer=True,
        uses_contexts=False,
        needs_reference=True,
        for_refusals=True,
        strict=True,
        evaluation_steps=steps,
        criteria=cfg.criteria,
    )


def metric_specs(configs: dict[str, MetricConfig]) -> dict[str, JudgeMetricSpec]:
    """The judge metrics in force (from `Config.metric_configs()`), in a stable order."""
    specs: dict[str, JudgeMetricSpec] = {}
    for name in JUDGE_METRICS:
        if name not in configs:
            continue
        cfg = configs[name]
        if name == "faithfulness":
            spec = JudgeMetricSpec(
                name,
                "FaithfulnessMetric",
                cfg.threshold,
                uses_answer=True,
                uses_contexts=True,
                needs_reference=False,
                for_refusals=True,
            )
        elif name == "answer_relevancy":
            spec = JudgeMetricSpec(
                name,
                "AnswerRelevancyMetric",
                cfg.threshold,
                uses_answer=True,
                uses_contexts=False,
                needs_reference=False,
                for_refusals=False,
            )
        elif name == "contextual_precision":
            spec = JudgeMetricSpec(
                name,
                "ContextualPrecisionMetric",
                cfg.threshold,
                uses_answer=False,
                uses_contexts=True,
                needs_reference=True,
                for_refusals=False,
            )
        elif name == "contextual_recall":
            spec = JudgeMetricSpec(
                name,
                "ContextualRecallMetric",
                cfg.threshold,
                uses_answer=False,
                uses_contexts=True,
                needs_reference=True,
                for_refusals=False,
            )
        elif name in CONVERSATIONAL:
            spec = JudgeMetricSpec(
                name,
                CONVERSATIONAL[name],
                cfg.threshold,
                uses_answer=True,
                uses_contexts=False,
                needs_reference=False,
                for_refusals=True,
                conversational=True,
            )
        elif name == "correctness":
            spec = _geval(name, cfg, CORRECTNESS_STEPS)
        else:
            spec = _geval(name, cfg, COMPLETENESS_STEPS)
        specs[name] = spec
    return specs


def expected_output(question: Question) -> str | None:
    if question.reference:
        return question.reference
    return REFUSAL_REFERENCE if question.is_refusal else None
