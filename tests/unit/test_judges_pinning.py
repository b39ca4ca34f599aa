"""Pinning: floating aliases are refused, dated / versioned ids accepted."""

import pytest

from rag_ci.judges.pinning import alias_problem


@pytest.mark.parametrize(
    "provider, model",
    [
        ("openai", "gpt-4o"),
        ("openai", "gpt-4.1-mini"),
        ("openai", "chatgpt-4o-latest"),
        ("anthropic", "claude-3-5-sonnet-latest"),
        ("anthropic", "claude-sonnet-4-5"),
        ("gemini", "gemini-2.0-flash"),
        ("gemini", "gemini-flash-latest"),
        ("ollama", "llama3.1"),
        ("ollama", "qwen2.5:latest"),
        ("openai-compatible", "latest"),
        ("openai-compatible", "mistral-large-latest"),
    ],
)
def test_floating_aliases_are_refused(provider, model):
    assert alias_problem(provider, model) is not None


@pytest.mark.parametrize(
    "provider, model",
    [
        ("openai", "gpt-4.1-mini-2025-04-14"),
        ("openai", "gpt-4-0613"),
        ("openai", "ft:gpt-4o-mini-2024-07-18:acme::abc"),
        ("anthropic", "claude-haiku-4-5-20251001"),
        ("gemini", "gemini-2.0-flash-001"),
        ("gemini", "gemini-2.5-flash"),
        ("gemini", "gemini-2.5-flash-preview-05-20"),
        ("ollama", "qwen2.5:7b-instruct-q4_K_M"),
        ("openai-compatible", "Qwen/Qwen2.5-7B-Instruct"),
        ("openai-compatible", "gpt-4.1-mini-2025-04-14"),
    ],
)
def test_pinned_ids_are_accepted(provider, model):
    assert alias_problem(provider, model) is None


def test_the_reason_names_the_model_and_a_pinned_example():
    problem = alias_problem("openai", "gpt-4o")
    assert "'gpt-4o'" in problem and "2025" in problem
