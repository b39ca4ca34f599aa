"""Google Gemini `generateContent` through the google-genai SDK, with a JSON schema reply."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rag_ci.judges.providers.base import Completion, ProviderSettings, transport_failure
from rag_ci.judges.providers.openai_chat import _short
from rag_ci.judges.providers.schemas import strict_json_schema
from rag_ci.judges.retry import Failure, is_retryable_status, parse_retry_after


class GeminiGenerate:
    def __init__(self, settings: ProviderSettings):
        from google.genai import errors, types

        self._errors = errors
        self._types = types
        self._model = settings.model
        self._temperature = settings.temperature
        http_options = types.HttpOptions(
            base_url=settings.base_url,
            timeout=int(settings.timeout_s * 1000),  # milliseconds
            retry_options=types.HttpRetryOptions(attempts=1),  # retries are rag-ci's
        )
        self._client = self._make_client(settings, http_options)

    def _make_client(self, settings: ProviderSettings, http_options: Any) -> Any:
        from google import genai

        return genai.Client(api_key=settings.api_key, http_options=http_options)

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        config = self._types.GenerateContentConfig(temperature=self._temperature)
        if schema is not None:
            config.response_mime_type = "application/json"
            config.response_json_schema = strict_json_schema(schema)
        response = await self._client.aio.models.generate_content(
            model=self._model, contents=prompt, config=config
        )
        usage = response.usage_metadata
        return Completion(
            text=response.text,
            input_tokens=(usage.prompt_token_count or 0) if usage else 0,
            output_tokens=(usage.candidates_token_count or 0) if usage else 0,
        )

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._errors.APIError):
            status = exc.code
            headers = getattr(getattr(exc, "response", None), "headers", None)
            return Failure(
                f"HTTP {status} from the judge: {_short(exc.message or exc.details)}",
                retryable=is_retryable_status(status),
                status=status,
                retry_after_s=parse_retry_after(headers),
            )
        return transport_failure(exc)

    async def aclose(self) -> None:
        await self._client.aio.aclose()
