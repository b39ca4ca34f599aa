"""Google Vertex AI: Gemini through google-genai (`vertexai=True`), Claude through the anthropic SDK's
`AsyncAnthropicVertex` (`rawPredict`), chosen by the model's family.

Both SDKs speak Vertex's paths (`/v1…/projects/{project}/locations/{location}/publishers/
{google|anthropic}/models/{model}:generateContent|:rawPredict`) with a bearer token; what is
here is only the choice between them and the credentials: an access token
(`GOOGLE_OAUTH_ACCESS_TOKEN`, e.g. `google-github-actions/auth`'s output) or the
application-default credentials (rag_ci.judges.cloud_settings resolves them before the run).
The request and reply handling is the Gemini and Anthropic providers' own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rag_ci.judges.families import family_of
from rag_ci.judges.providers.anthropic_messages import AnthropicMessages
from rag_ci.judges.providers.base import ChatProvider, Completion, ProviderSettings
from rag_ci.judges.providers.gemini_generate import GeminiGenerate
from rag_ci.judges.retry import Failure

_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


class VertexGemini(GeminiGenerate):
    def _make_client(self, settings: ProviderSettings, http_options: Any) -> Any:
        from google import genai

        return genai.Client(
            vertexai=True,
            project=settings.cloud["project"],
            location=settings.cloud["location"],
            credentials=google_credentials(settings),
            http_options=http_options,
        )


class VertexClaude(AnthropicMessages):
    def _make_client(self, settings: ProviderSettings) -> Any:
        import anthropic

        return anthropic.AsyncAnthropicVertex(
            region=settings.cloud["location"],
            project_id=settings.cloud["project"],
            access_token=settings.api_key,
            credentials=None if settings.api_key else google_credentials(settings),
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
        )


class VertexModel:
    """Gemini or Claude on Vertex AI, by the model's family (the family check follows the model)."""

    def __init__(self, settings: ProviderSettings):
        chosen: ChatProvider
        if family_of(settings.model) == "anthropic":
            chosen = VertexClaude(settings)
        else:
            chosen = VertexGemini(settings)
        self._chosen = chosen

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        return await self._chosen.complete(prompt, schema)

    def classify(self, exc: BaseException) -> Failure | None:
        return self._chosen.classify(exc)

    async def aclose(self) -> None:
        await self._chosen.aclose()


def google_credentials(settings: ProviderSettings) -> Any:
    """The access token as credentials, else the application-default ones found before the run."""
    if settings.api_key:
        from google.oauth2.credentials import Credentials

        return Credentials(token=settings.api_key)
    return settings.cloud.get("google_credentials")
