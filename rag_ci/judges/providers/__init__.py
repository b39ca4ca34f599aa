"""The registry of judge providers (like simonw/llm's plugins: one entry per provider).

An entry holds the provider's facts (rag_ci.core.config.providers: which pip extra brings
the SDK, which environment variable holds the key, whether it is self-hosted, how its model
ids are pinned) and where its `ChatProvider` class lives. The class is imported only when
that provider is used, so a missing SDK is reported as a missing extra, and
`import rag_ci.judges` stays cheap.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from rag_ci.core.config.providers import PROVIDERS as PROVIDER_FACTS
from rag_ci.core.config.providers import ProviderFacts
from rag_ci.errors import RagCiError
from rag_ci.judges.providers.base import ChatProvider, Completion, ProviderSettings


@dataclass(frozen=True)
class ProviderSpec:
    """A provider's facts (rag_ci.core.config.providers) and the class that speaks to its API."""

    facts: ProviderFacts
    implementation: str  # "module:Class" of the ChatProvider

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def extra(self) -> str:
        return self.facts.extra

    @property
    def sdk_modules(self) -> tuple[str, ...]:
        return self.facts.sdk_modules

    @property
    def api_key_env(self) -> str | None:
        return self.facts.api_key_env

    @property
    def key_required(self) -> bool:
        return self.facts.key_required

    @property
    def self_hosted(self) -> bool:
        return self.facts.self_hosted

    def ensure_installed(self) -> None:
        """Check the packages are there without importing them (DeepEval's import takes seconds)."""
        for module in ("deepeval",) + self.sdk_modules:
            try:
                found = importlib.util.find_spec(module) is not None
            except ImportError:  # a missing parent package
                found = False
            if not found:
                raise RagCiError(
                    f"judge provider '{self.name}' needs the '{module}' package, which is not installed: "
                    f"pip install 'rag-ci-gate[{self.extra}]'"
                )

    def create(self, settings: ProviderSettings) -> ChatProvider:
        module_name, _, class_name = self.implementation.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        return cls(settings)


def provider_spec(name: str) -> ProviderSpec:
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS)) + ", none"
        raise RagCiError(f"unknown judge provider '{name}' (known: {known})") from None


# The class of each provider of the facts table; tests/unit/test_provider_table.py checks that
# every provider there has one here, and nothing else does.
_HERE = "rag_ci.judges.providers"
_IMPLEMENTATIONS = {
    "openai": f"{_HERE}.openai_chat:OpenAIChat",
    "anthropic": f"{_HERE}.anthropic_messages:AnthropicMessages",
    "gemini": f"{_HERE}.gemini_generate:GeminiGenerate",
    "ollama": f"{_HERE}.ollama_chat:OllamaChat",
    "openai-compatible": f"{_HERE}.openai_chat:OpenAIChat",
    "azure-openai": f"{_HERE}.azure_openai_chat:AzureOpenAIChat",
    "bedrock": f"{_HERE}.bedrock_converse:BedrockConverse",
    "vertex": f"{_HERE}.vertex_ai:VertexModel",
    "fake": "rag_ci.judges.fake:FakeChat",
}
PROVIDERS: dict[str, ProviderSpec] = {
    name: ProviderSpec(PROVIDER_FACTS[name], implementation)
    for name, implementation in _IMPLEMENTATIONS.items()
}

__all__ = [
    "PROVIDERS",
    "ChatProvider",
    "Completion",
    "ProviderSettings",
    "ProviderSpec",
    "provider_spec",
]
