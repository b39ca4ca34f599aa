"""The fake judge's answers to DeepEval's conversation-level prompts (knowledge retention,
conversation completeness): deterministic, offline, like the rest of its policy
(rag_ci.judges.fake.JudgePolicy asks here first).

- knowledge retention: each user message gives one fact (what it asked), and an assistant message
  is an attrition (it lost what the conversation said) exactly when it refuses;
- conversation completeness: one intention per user message, met unless the conversation holds
  a refusal.
"""

from __future__ import annotations

import ast
from typing import Any

from rag_ci.core.base.text import is_refusal

CONVERSATION_KINDS = ("knowledge_data", "retention_verdict", "intentions", "intention_verdict")


def conversation_prompt_kind(prompt: str) -> str | None:
    """The kind of a conversation-level prompt, None for any other."""
    if "Latest User Message:" in prompt and "factual information" in prompt:
        return "knowledge_data"
    if "\nLLM message:\n" in prompt and "Previous Knowledge:" in prompt:
        return "retention_verdict"
    if "'intentions' key must be a list of strings" in prompt:
        return "intentions"
    if "\nUser Intention:\n" in prompt and "\nTurns:\n" in prompt:
        return "intention_verdict"
    return None


def _after(prompt: str, start: str, end: str) -> str:
    i = prompt.rfind(start)
    if i == -1:
        raise ValueError(f"marker {start!r} not in prompt")
    j = prompt.find(end, i + len(start))
    return prompt[i + len(start) : j if j != -1 else None]


def _contents(turns: str, role: str) -> list[str]:
    """The contents of `role`'s messages in DeepEval's rendered list of turns (a Python literal)."""
    try:
        found = ast.literal_eval(turns.strip())
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"turns not a list literal: {turns[:80]!r}") from exc
    return [str(t.get("content", "")) for t in found if isinstance(t, dict) and t.get("role") == role]


def conversation_answer(kind: str, prompt: str) -> dict[str, Any]:
    if kind == "knowledge_data":  # the user's latest message, as the one fact it gives
        return {"data": {"Asked": " ".join(_after(prompt, "\nLatest User Message:\n", "\n\nJSON:").split())}}
    if kind == "retention_verdict":
        said = _after(prompt, "\nLLM message:\n", "\n\nPrevious Knowledge:")
        if is_refusal(said):
            return {"verdict": "yes", "reason": "The assistant lost the subject the user gave earlier."}
        return {"verdict": "no"}
    turns = _after(prompt, "\nTurns:\n", "\n\n")
    if kind == "intentions":
        return {"intentions": [f"User wants to know: {c}" for c in _contents(turns, "user")]}
    if any(is_refusal(c) for c in _contents(turns, "assistant")):
        return {"verdict": "no", "reason": "The assistant did not answer what the user asked."}
    return {"verdict": "yes"}
