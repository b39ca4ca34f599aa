"""`--judge PROVIDER:MODEL[@BASE_URL]`."""

import pytest

from rag_ci.core.config.cloud import CLOUD_SETTINGS
from rag_ci.errors import RagCiError
from rag_ci.judges.build import parse_judge_option


@pytest.mark.parametrize(
    "value, expected",
    [
        (
            "openai:gpt-4.1-mini-2025-04-14",
            {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14", "base_url": None},
        ),
        (
            "ollama:qwen2.5:7b-instruct",
            {"provider": "ollama", "model": "qwen2.5:7b-instruct", "base_url": None},
        ),
        (
            "ollama:qwen2.5:7b@http://gpu-box:11434",
            {"provider": "ollama", "model": "qwen2.5:7b", "base_url": "http://gpu-box:11434"},
        ),
        (
            "openai-compatible:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1",
            {
                "provider": "openai-compatible",
                "model": "Qwen/Qwen2.5-7B-Instruct",
                "base_url": "http://127.0.0.1:8000/v1",
            },
        ),
        ("none", {"provider": "none", "model": None, "base_url": None}),
    ],
)
def test_parses_provider_model_and_base_url(value, expected):
    assert parse_judge_option(value) == {**expected, "family": None, "prices": None, **NO_CLOUD}


NO_CLOUD = dict.fromkeys(CLOUD_SETTINGS)  # a cloud's settings stay with the provider they were written for


def test_model_specific_settings_from_the_config_are_reset():
    from rag_ci.core.config import JudgeConfig

    configured = JudgeConfig(
        provider="openai-compatible",
        model="acme-judge-7b",
        family="mistral",
        prices={"input_per_mtok": 1, "output_per_mtok": 2},
        concurrency=4,
    )
    merged = JudgeConfig(
        **{**configured.model_dump(exclude_unset=True), **parse_judge_option("ollama:qwen2.5:7b")}
    )
    assert (merged.provider, merged.model, merged.family, merged.prices, merged.concurrency) == (
        "ollama",
        "qwen2.5:7b",
        None,
        None,
        4,
    )


def test_a_clouds_settings_from_the_config_are_reset_for_another_provider():
    from rag_ci.core.config import JudgeConfig

    configured = JudgeConfig(
        provider="bedrock", model="anthropic.claude-3-5-haiku-20241022-v1:0", region="us-east-1"
    )
    merged = JudgeConfig(
        **{
            **configured.model_dump(exclude_unset=True),
            **parse_judge_option("openai:gpt-4.1-mini-2025-04-14"),
        }
    )
    assert (merged.provider, merged.region) == ("openai", None)


@pytest.mark.parametrize(
    "value, words",
    [
        ("openai", "model is missing"),
        ("bard:gemini-pro", "unknown judge provider 'bard'"),
        ("none:x", "takes no model"),
        ("", "expected PROVIDER:MODEL"),
    ],
)
def test_bad_values_say_what_is_expected(value, words):
    with pytest.raises(RagCiError, match=words):
        parse_judge_option(value)
