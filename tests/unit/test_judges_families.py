"""Model id → family, the basis of the same-family refusal."""

import pytest

from rag_ci.judges.families import canonical_family, family_of


@pytest.mark.parametrize(
    "model, family",
    [
        ("gpt-4.1-mini-2025-04-14", "openai"),
        ("o3-mini-2025-01-31", "openai"),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "openai"),
        ("openai/gpt-oss-20b", "openai"),
        ("claude-haiku-4-5-20251001", "anthropic"),
        ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic"),
        ("gemini-2.5-flash", "google"),
        ("models/gemini-2.0-flash-001", "google"),
        ("gemma2:9b", "google"),
        ("meta-llama/Llama-3.1-8B-Instruct", "meta"),
        ("llama3.1:8b", "meta"),
        ("Qwen/Qwen2.5-7B-Instruct", "alibaba"),
        ("qwen2.5:7b-instruct", "alibaba"),
        ("mistral-large-2411", "mistral"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistral"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek"),
        ("phi3:mini", "microsoft"),
        ("microsoft/Phi-4-mini-instruct", "microsoft"),
        ("grok-3-mini", "xai"),
        ("command-r-plus-08-2024", "cohere"),
        ("accounts/fireworks/models/llama-v3p1-70b-instruct", "meta"),
    ],
)
def test_known_model_ids_map_to_their_lab(model, family):
    assert family_of(model) == family


def test_an_organisation_prefix_names_the_family_of_an_unfamiliar_model_name():
    assert family_of("google/t5-xxl-judge") == "google"


@pytest.mark.parametrize("model", ["extractive-bm25-1", "my-finetune-v3", "tiny-1"])
def test_unknown_ids_have_no_family(model):
    assert family_of(model) is None


def test_overrides_accept_common_spellings():
    assert canonical_family("Qwen") == "alibaba"
    assert canonical_family("Gemini") == "google"
    assert canonical_family("extractive") == "extractive"
