"""The simulated judge's answers to promptfoo 0.123's grader prompts (benchmarks only).

promptfoo's RAG assertions send the Ragas-derived prompts of its `src/external/prompts/ragas.ts`
(context-faithfulness: statements then natural-language inference; answer-relevance: a
question generated from the answer, then embeddings; context-recall; context-relevance),
`factuality` its own JSON prompt and `llm-rubric` its default grading prompt. This policy
recognises each and answers it as promptfoo parses it, with the same term-overlap rules the
simulator applies to DeepEval's prompts (rag_ci/judges/fake.py): a statement is supported
when its numbers and half its terms are in the text. Its verdicts are a simulator's, so the
peers benchmark compares the *work* the two tools make the judge do (calls, time), not their
verdicts.
"""

from __future__ import annotations

import hashlib
import json
import math

from rag_ci.judges.fake import (
    UnknownPrompt,
    complete,
    correct,
    is_refusal,
    sentences,
    supported,
    terms,
)

EMBEDDING_DIMENSIONS = 64


def kind(prompt: str) -> str | None:
    """Which promptfoo grader prompt this is, or None (not one of promptfoo's)."""
    if "create one or more statements from each sentence in the given answer" in prompt:
        return "pf_statements"
    if prompt.startswith("Prompt: Natural language inference"):
        return "pf_nli"
    if prompt.startswith("Generate question for the given answer."):
        return "pf_question"
    if "classify if the sentence can be attributed to the given context" in prompt:
        return "pf_recall"
    if "extract relevant sentences from the provided context" in prompt:
        return "pf_context_relevance"
    if "<expert_answer>" in prompt and "<submitted_answer>" in prompt:
        return "pf_factuality"
    if "<Rubric>" in prompt and "<Output>" in prompt:
        return "pf_rubric"
    return None


def answer(prompt: str) -> str:
    """The reply's text, as the grader parses it (plain text for the Ragas prompts, JSON for the others)."""
    found = kind(prompt)
    if found is None:
        raise UnknownPrompt(prompt[:200])
    return _ANSWERS[found](prompt)


def _last(prompt: str, start: str, end: str | None = None) -> str:
    """The text after the LAST `start` (the prompts carry a worked example first) up to `end`."""
    i = prompt.rfind(start)
    if i == -1:
        raise UnknownPrompt(f"marker {start!r} not in prompt")
    i += len(start)
    j = prompt.find(end, i) if end else -1
    return prompt[i:] if j == -1 else prompt[i:j]


def _statements(prompt: str) -> str:
    found = [s for s in sentences(_last(prompt, "\nanswer: ", "\nstatements:")) if not is_refusal(s)]
    return "\n".join(found) or "The answer states no fact."


def _nli(prompt: str) -> str:
    context = _last(prompt, "context:\n", "\nstatements:\n")
    statements = [s for s in _last(prompt, "\nstatements:\n", "\nAnswer:").splitlines() if s.strip()]
    verdicts = ["Yes" if supported(s, context) else "No" for s in statements]
    lines = [
        f"{n}. {s}\nExplanation: term overlap with the context. Verdict: {v}."
        for n, (s, v) in enumerate(zip(statements, verdicts), 1)
    ]
    return (
        "\n".join(lines)
        + "\nFinal verdict for each statement in order: "
        + " ".join(f"{v}." for v in verdicts)
    )


def _question(prompt: str) -> str:
    text = _last(prompt, "\n\nAnswer:", "\nQuestion:")
    if is_refusal(text):
        return "Is this information in the documents?"
    return "What is " + " ".join(sorted(terms(text))[:12]) + "?"


def _recall(prompt: str) -> str:
    context = _last(prompt, "\ncontext:", "\nanswer:")
    truth = _last(prompt, "\nanswer:", "\nclassification:")
    lines = [
        f"{n}. {s} So {'[Attributed]' if supported(s, context) else '[Not Attributed]'}"
        for n, s in enumerate(sentences(truth), 1)
    ]
    return "\n".join(lines) or "1. Nothing to attribute. So [Not Attributed]"


def _context_relevance(prompt: str) -> str:
    query = terms(_last(prompt, "\nquery: ", "\ncontext: "))
    context = _last(prompt, "\ncontext: ", "\ncandidate sentences:")
    chosen = [s for s in sentences(context) if len(terms(s) & query) >= 2]
    return "\n".join(chosen) or "Insufficient Information"


def _factuality(prompt: str) -> str:
    expert = _last(prompt, "<expert_answer>", "</expert_answer>").strip()
    submitted = _last(prompt, "<submitted_answer>", "</submitted_answer>").strip()
    ok = correct(submitted, expert)
    return json.dumps(
        {
            "category": "C" if ok else "D",
            "reason": "The facts agree." if ok else "The submitted answer disagrees with the expert answer.",
        }
    )


def _rubric(prompt: str) -> str:
    output = _last(prompt, "<Output>\n", "\n</Output>")
    reference = _last(prompt, "<Rubric>\n", "\n</Rubric>").partition("reference answer:")[2].strip()
    ok = complete(output, reference)
    return json.dumps(
        {
            "reason": "Every fact of the reference is stated."
            if ok
            else "A fact of the reference is missing.",
            "pass": ok,
            "score": 1.0 if ok else 0.0,
        }
    )


_ANSWERS = {
    "pf_statements": _statements,
    "pf_nli": _nli,
    "pf_question": _question,
    "pf_recall": _recall,
    "pf_context_relevance": _context_relevance,
    "pf_factuality": _factuality,
    "pf_rubric": _rubric,
}


def embedding(text: str) -> list[float]:
    """A deterministic bag-of-terms vector (hashed, unit length): cosine similarity = term overlap."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for term in terms(text) or {text.strip().lower()}:
        slot = int.from_bytes(hashlib.sha256(term.encode()).digest()[:4], "big") % EMBEDDING_DIMENSIONS
        vector[slot] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]
