"""The registry of judge providers (like simonw/llm's plugins: one entry per provider).

An entry says which pip extra brings the SDK, which environment variable holds the
key, and where the `ChatProvider` class lives. The class is imported only when
that provider is used, so a missing SDK is reported as a missing extra, and
`import rag_ci.judges` stays cheap. `register_provider` adds one from outside.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from rag_ci.errors import RagCiError
from rag_ci.judges.providers.base import ChatProvider, Completion, ProviderSettings


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    extra: str  # pip extra that installs the SDK: pip install 'rag-ci-gate[<extra>]'
    sdk_modules: tuple[str, ...]  # imported to check the extra is installed
    implementation: str  # "module:Class" of the ChatProvider
    api_key_env: str | None  # default env var holding the key; judge.api_key_env overrides
    key_required: bool
    self_hosted: bool  # judge calls cost nothing unless judge.prices says otherwise

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


PROVIDERS: dict[str, ProviderSpec] = {}


def register_provider(spec: ProviderSpec) -> None:
    PROVIDERS[spec.name] = spec


def provider_spec(name: str) -> ProviderSpec:
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS)) + ", none"
        raise RagCiError(f"unknown judge provider '{name}' (known: {known})") from None


_HERE = "rag_ci.judges.providers"
register_provider(
    ProviderSpec(
        "openai",
        "openai",
        ("openai",),
        f"{_HERE}.openai_chat:OpenAIChat",
        "OPENAI_API_KEY",
        key_required=True,
        self_hosted=False,
    )
)
register_provider(
    ProviderSpec(
        "openai-compatible",
        "openai",
        ("openai",),
        f"{_HERE}.openai_chat:OpenAIChat",
        None,
        key_required=False,
        self_hosted=True,
    )
)
register_provider(
    ProviderSpec(
        "anthropic",
        "anthropic",
        ("anthropic",),
        f"{_HERE}.anthropic_messages:AnthropicMessages",
        "ANTHROPIC_API_KEY",
        key_required=True,
        self_hosted=False,
    )
)
register_provider(
    ProviderSpec(
        "gemini",
        "gemini",
        ("google.genai",),
        f"{_HERE}.gemini_generate:GeminiGenerate",
        "GOOGLE_API_KEY",
        key_required=True,
        self_hosted=False,
    )
)
register_provider(
    ProviderSpec(
        "ollama",
        "ollama",
        ("ollama",),
        f"{_HERE}.ollama_chat:OllamaChat",
        None,
        key_required=False,
        self_hosted=True,
    )
)
# A dry run, not a judge: DeepEval's prompts answered in-process by a fixed policy (docs/judges.md).
register_provider(
    ProviderSpec(
        "fake", "deepeval", (), "rag_ci.judges.fake:FakeChat", None, key_required=False, self_hosted=True
    )
)

__all__ = [
    "PROVIDERS",
    "ChatProvider",
    "Completion",
    "ProviderSettings",
    "ProviderSpec",
    "provider_spec",
    "register_provider",
]
