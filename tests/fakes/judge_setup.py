"""Judge configs pointing at the fake servers: pinned models, fake keys, fast retries."""

from __future__ import annotations

from typing import Any

from fakes.cloud_judge_servers import ACCEPTED
from fakes.judge_servers import FakeJudgeServer

# A pinned model id per provider, of a family other than the generators used in tests.
JUDGE_MODELS = {
    "openai": "gpt-4.1-mini-2025-04-14",
    "openai-compatible": "Qwen/Qwen2.5-7B-Instruct",
    "anthropic": "claude-haiku-4-5-20251001",
    "gemini": "gemini-2.5-flash",
    "ollama": "qwen2.5:7b-instruct",
    "azure-openai": "gpt-4.1-mini-2025-04-14",
    "bedrock": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "vertex": "gemini-2.5-flash",
}
# The clouds' settings the fake servers expect (fakes.cloud_judge_servers).
CLOUD_SETTINGS: dict[str, dict[str, str]] = {
    "azure-openai": {"deployment": "judge", "api_version": "2024-10-21"},
    "bedrock": {"region": "us-east-1"},
    "vertex": {"project": "rag-ci-test", "location": "us-central1"},
}
FAKE_KEYS = {
    "OPENAI_API_KEY": "sk-fake",
    "ANTHROPIC_API_KEY": "sk-ant-fake",
    "GOOGLE_API_KEY": "fake",
    "AZURE_OPENAI_API_KEY": ACCEPTED["azure-key"],
    "AWS_ACCESS_KEY_ID": ACCEPTED["aws-key-id"],
    "AWS_SECRET_ACCESS_KEY": ACCEPTED["aws-secret"],
    "GOOGLE_OAUTH_ACCESS_TOKEN": ACCEPTED["google-token"],
}


def judge_config(
    provider: str,
    server: FakeJudgeServer,
    *,
    metrics: dict | None = None,
    gate: dict | None = None,
    generator_model: str = "mistral-small-2409",
    **judge: Any,
):
    from rag_ci.core.config import Config

    data: dict[str, Any] = {
        "target": {"kind": "python", "entry": "fake:answer", "generator_model": generator_model},
        "judge": {
            "provider": provider,
            "model": JUDGE_MODELS[provider],
            "base_url": server.base_url,
            "timeout_s": 5,
            "max_retries": 3,
            "backoff_s": 0.01,
            **CLOUD_SETTINGS.get(provider, {}),
            **judge,
        },
    }
    if metrics is not None:
        data["metrics"] = metrics
    if gate is not None:
        data["gate"] = gate
    return Config.model_validate(data)
