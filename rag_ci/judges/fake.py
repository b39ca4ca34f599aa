"""The fake judge: a deterministic, offline stand-in for the judge model (`--judge fake`).

A dry run of the whole DeepEval tier: DeepEval's real metric classes render their
real prompts and rag-ci's judge client sends them, but `FakeChat` answers in-process
with `JudgePolicy` instead of calling a model: no network, no API key, the same
verdicts every run. It is a dry run, never a gate: its verdicts say nothing about
answer quality, its fingerprint (provider `fake`) matches no real judge's, and the
action refuses to make a baseline with it (docs/judges.md).

The same policy is the "model" behind the test suite's fake judge servers
(tests/fakes/judge_servers.py, which speak the providers' wire protocols) and the
benchmarks' simulator. It recognises which DeepEval 4.3.1 prompt it received
(truths, claims, verdicts, statements, GEval results, reasons) and answers with a
deterministic, term-overlap policy, so that a correct answer and a wrong answer get
different verdicts:

- "terms" are numbers and words of 4+ letters outside a stop list;
- a statement is *supported* by a text when all its numbers occur in the text and at
  least half its terms do;
- faithfulness: a refusal sentence is no claim; a claim is "yes" when supported by the
  retrieval context, else "no";
- answer relevancy: a statement is "no" (irrelevant) only when it contains
  "by the way" (the fakes' convention for padding);
- contextual precision: a node is useful when it shares a number, or half the
  terms, with the expected output; contextual recall: each expected-output
  sentence is "yes" when supported by the joined contexts;
- correctness (GEval, strict): refusal expected → 1 iff the answer refuses; otherwise
  1 iff the answer states no number missing from the reference, contains one of
  the reference's numbers (when it has any) and 30% of its terms;
- completeness: every reference number and 70% of its terms are in the answer;
- equivalence (rag-ci's `reuse_equivalent_answers` question): the same facts when both
  answers have exactly the same terms.

DeepEval's Synthesizer prompts (`rag-ci questions generate --writer fake`) go to the fake
writer's policy, rag_ci.judges.fake_writer.WriterPolicy.

A seeded *flipper* (a judge that disagrees with itself, docs/noise.md "Judge noise") inverts
each GEval score and each yes/no verdict (faithfulness, relevancy, contextual precision and
recall) independently with a probability, deterministically per (prompt, occurrence, verdict),
whatever order concurrent requests arrive in.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rag_ci.judges.fake_conversation import CONVERSATION_KINDS, conversation_answer, conversation_prompt_kind
from rag_ci.judges.fake_writer import WRITER_KINDS, WriterPolicy, writer_prompt_kind
from rag_ci.judges.families import FAKE_FAMILY  # noqa: F401 (its family: never checked, never claimed)
from rag_ci.judges.scorer import DeepEvalJudgeScorer

STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "what",
        "which",
        "when",
        "where",
        "have",
        "been",
        "were",
        "will",
        "would",
        "there",
        "their",
        "about",
        "into",
        "than",
        "then",
        "them",
        "they",
        "does",
        "your",
        "yours",
        "also",
        "only",
        "some",
        "such",
        "each",
        "many",
        "much",
        "more",
        "most",
        "very",
        "over",
        "under",
        "just",
        "like",
        "these",
        "those",
        "answer",
        "question",
        "documents",
        "document",
        "context",
        "output",
        "expected",
        "actual",
    ]
)
REFUSAL_MARKERS = (
    "not in the documents",
    "don't know",
    "do not know",
    "cannot find",
    "can't find",
    "could not find",
    "couldn't find",
    "no information",
    "not available",
    "do not contain",
    "does not contain",
    "not contained",
)
IRRELEVANT_MARKER = "by the way"


class UnknownPrompt(ValueError):
    """The prompt is not one of DeepEval's metric prompts this policy knows (a DeepEval change?)."""


def terms(text: str) -> set[str]:
    words = (w.strip(".,;:!?()[]'\"") for w in re.findall(r"[\w.,\-]+", text.lower()))
    return {w for w in words if w and (any(c.isdigit() for c in w) or (len(w) >= 4 and w not in STOP))}


def numbers(found: set[str]) -> set[str]:
    return {t for t in found if any(c.isdigit() for c in t)}


def supported(statement: str, evidence: str) -> bool:
    claim, known = terms(statement), terms(evidence)
    if not claim:
        return True
    if numbers(claim) - known:
        return False
    return len(claim & known) / len(claim) >= 0.5


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p.strip()]


def is_refusal(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in REFUSAL_MARKERS)


def between(prompt: str, start: str, end: str | None = None) -> str:
    i = prompt.find(start)
    if i == -1:
        raise UnknownPrompt(f"marker {start!r} not in prompt")
    i += len(start)
    j = prompt.find(end, i) if end else -1
    return prompt[i:] if j == -1 else prompt[i:j]


def literal_list(text: str) -> list[Any]:
    return list(ast.literal_eval(text.strip()))


def correct(answer: str, reference: str) -> bool:
    if is_refusal(reference):
        return is_refusal(answer)
    if is_refusal(answer):
        return False
    got, ref = terms(answer), terms(reference)
    if numbers(got) - ref:
        return False
    if numbers(ref) and not (numbers(ref) & got):
        return False
    return not ref or len(ref & got) / len(ref) >= 0.3


def complete(answer: str, reference: str) -> bool:
    if is_refusal(reference):
        return is_refusal(answer)
    got, ref = terms(answer), terms(reference)
    return not (numbers(ref) - got) and (not ref or len(ref & got) / len(ref) >= 0.7)


@dataclass
class JudgePolicy:
    """Deterministic answers; optional seeded flipping of GEval verdicts."""

    flip_probability: float = 0.0
    seed: int = 0
    _seen: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    writer: WriterPolicy = field(default_factory=WriterPolicy)

    def kind(self, prompt: str) -> str:
        written = writer_prompt_kind(prompt) or conversation_prompt_kind(prompt)
        if written is not None:
            return written
        if "state exactly the same facts as the baseline answer" in prompt:
            return "equivalence"
        if "STRICTLY EITHER 1" in prompt:
            return "geval_strict"
        if "generate 3-4 concise evaluation steps" in prompt:
            return "geval_steps"
        if "whether EACH claim contradicts" in prompt:
            return "faithfulness_verdicts"
        if '"claims" key' in prompt:
            return "claims"
        if '"truths" key' in prompt:
            return "truths"
        if "determine whether each statement is relevant" in prompt:
            return "relevancy_verdicts"
        if '"statements" key' in prompt:
            return "statements"
        if "was remotely useful in arriving at the expected output" in prompt:
            return "precision_verdicts"
        if "can be attributed to the nodes of retrieval contexts" in prompt:
            return "recall_verdicts"
        if "'reason' key" in prompt or '"reason" key' in prompt:
            return "reason"
        raise UnknownPrompt(prompt[:200])

    def answer(self, prompt: str) -> dict[str, Any]:
        kind = self.kind(prompt)
        if kind in WRITER_KINDS or kind in CONVERSATION_KINDS:
            try:
                return (self.writer.answer if kind in WRITER_KINDS else conversation_answer)(kind, prompt)
            except ValueError as exc:  # a marker missing: DeepEval changed the prompt
                raise UnknownPrompt(f"{kind}: {exc}") from None
        reply = getattr(self, f"_{kind}")(prompt)
        if kind.endswith("_verdicts") and self.flip_probability > 0:
            draws = self._draws(prompt, len(reply["verdicts"]))
            reply["verdicts"] = [_flipped(v) if flip else v for v, flip in zip(reply["verdicts"], draws)]
        return reply

    # -- extraction --------------------------------------------------------

    def _truths(self, prompt: str) -> dict:
        return {"truths": sentences(between(prompt, "\nText:\n", "\n\nJSON:"))}

    def _claims(self, prompt: str) -> dict:
        # "I could not find this in the documents." states no fact: like a real judge, extract no claim.
        found = sentences(between(prompt, "AI Output:\n", "\n\nJSON:"))
        return {"claims": [s for s in found if not is_refusal(s)]}

    def _statements(self, prompt: str) -> dict:
        return {"statements": sentences(between(prompt, "\nText:\n", "\n\nJSON:"))}

    def _geval_steps(self, prompt: str) -> dict:
        return {"steps": ["Compare the actual output with the expected output.", "Check the facts agree."]}

    def _equivalence(self, prompt: str) -> dict:
        # rag-ci's reuse_equivalent_answers question: the same facts when both answers have the
        # same numbers and the same terms (word order and stop words aside).
        before = terms(between(prompt, "Baseline answer:\n", "\n\nNew answer:"))
        after = terms(between(prompt, "New answer:\n", "\n\nDoes the new answer"))
        return {"same_facts": before == after}

    def _reason(self, prompt: str) -> dict:
        return {"reason": "The score is as it is because the fake judge applied its term-overlap policy."}

    # -- verdicts ------------------------------------------------------------

    def _faithfulness_verdicts(self, prompt: str) -> dict:
        context = between(prompt, "Retrieval Contexts:\n", "\n\nClaims:")
        claims = literal_list(between(prompt, "\n\nClaims:\n", "\n\nJSON:"))
        return {
            "verdicts": [
                _verdict(supported(c, context), "The context does not support this claim.") for c in claims
            ]
        }

    def _relevancy_verdicts(self, prompt: str) -> dict:
        statements = literal_list(between(prompt, "\n\nStatements:\n", "\n\nJSON:"))
        return {
            "verdicts": [
                _verdict(IRRELEVANT_MARKER not in s.lower(), "This statement is padding.") for s in statements
            ]
        }

    def _precision_verdicts(self, prompt: str) -> dict:
        expected = between(prompt, "Expected output:\n", "\n\nRetrieval Context")
        nodes_text = (
            between(prompt, "documents):\n", "\n\nJSON:")
            if "documents):" in prompt
            else between(prompt, "document):\n", "\n\nJSON:")
        )
        ref = terms(expected)
        verdicts = []
        for node in literal_list(nodes_text):
            found = terms(str(node)) & ref
            useful = bool(numbers(found)) or (bool(ref) and len(found) / len(ref) >= 0.5)
            verdicts.append(_verdict(useful, "This node does not help arrive at the expected output."))
        return {"verdicts": verdicts}

    def _recall_verdicts(self, prompt: str) -> dict:
        expected = between(prompt, "Expected Output:\n", "\n\nRetrieval Context:")
        context = " ".join(
            str(c) for c in literal_list(between(prompt, "\n\nRetrieval Context:\n", "\n\nJSON:"))
        )
        return {
            "verdicts": [_verdict(supported(s, context), "No node states this.") for s in sentences(expected)]
        }

    def _geval_strict(self, prompt: str) -> dict:
        steps = between(prompt, "Evaluation Steps:\n", "\n\nInput:")
        actual = between(prompt, "Actual Output:\n", "\n\nExpected Output:").strip()
        expected = between(prompt, "Expected Output:\n", "\n\n").strip()
        check = (
            complete
            if "is present in the Actual Output" in steps or "present in the Actual Output" in steps
            else correct
        )
        score = 1 if check(actual, expected) else 0
        if self._flip(prompt):
            score = 1 - score
        reason = (
            "The actual output agrees with the expected output."
            if score
            else "The actual output does not match the expected output."
        )
        return {"reason": reason, "score": score}

    def _flip(self, prompt: str) -> bool:
        if self.flip_probability <= 0:
            return False
        return self._draws(prompt, 1)[0]

    def _draws(self, prompt: str, n: int) -> list[bool]:
        """n independent flips for this occurrence of this prompt (the same prompt asked again draws anew)."""
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
        with self._lock:
            occurrence = self._seen[digest]
            self._seen[digest] += 1
        draw = random.Random(f"{self.seed}:{digest}:{occurrence}")
        return [draw.random() < self.flip_probability for _ in range(n)]


def _flipped(verdict: dict) -> dict:
    return {**verdict, "verdict": "no" if verdict["verdict"] == "yes" else "yes"}


def _verdict(ok: bool, reason: str) -> dict:
    # Strict structured output always carries every field, so "reason" is always present.
    return (
        {"verdict": "yes", "reason": "Supported by the text."} if ok else {"verdict": "no", "reason": reason}
    )


# The fake judge's one model id, versioned: a change to the policy's verdicts bumps it, so
# results judged by two versions of the fake are not comparable (the judge fingerprint).
FAKE_MODEL = "rag-ci-fake-judge-1"


class FakeChat:
    """The `fake` provider (rag_ci.judges.providers): answers DeepEval's prompts in-process."""

    def __init__(self, settings: Any = None, policy: JudgePolicy | None = None):
        self._policy = policy or JudgePolicy()

    async def complete(self, prompt: str, schema: Any) -> Any:
        from rag_ci.judges.providers.base import Completion

        text = json.dumps(self._policy.answer(prompt))
        # Token counts as the fake servers count them (4 characters a token): the cost report has
        # figures to show, and a self-hosted price of 0 keeps the cost at 0.
        return Completion(text=text, input_tokens=len(prompt) // 4, output_tokens=max(1, len(text) // 4))

    def classify(self, exc: BaseException) -> Any:
        from rag_ci.judges.retry import Failure

        if isinstance(exc, UnknownPrompt):  # DeepEval changed a prompt: that metric fails, the run goes on
            return Failure(
                f"the fake judge does not know this prompt (a DeepEval change?): {exc}"[:300], retryable=False
            )
        return None

    async def aclose(self) -> None:
        return None


class FakeJudgeScorer(DeepEvalJudgeScorer):
    """The DeepEval tier with the fake judge: the same scorer, without the family check."""

    def check_generator(self, model: str) -> None:
        # Family separation guards against a model's self-preference; a fixed policy has none.
        # Skipping it is safe only because the fake is never a gate: nothing about it passes
        # for a judge "of another family" (the family it reports, `fake`, is refused to any
        # real judge).
        return None
