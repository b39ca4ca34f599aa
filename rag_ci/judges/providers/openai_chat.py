"""OpenAI chat completions, for `openai` and for `openai-compatible` servers (vLLM, llama.cpp, LM Studio).

One `AsyncOpenAI` client per scorer (DeepEval 4.3.1's OpenAIModel builds a new one
per call: a TLS handshake each time, on the event loop). SDK retries are off; see
rag_ci.judges.retry. Structured output uses `response_format` json_schema (strict),
which the OpenAI API, vLLM, llama.cpp's server and LM Studio all accept.
"""

from __future__ import annotations

from pydantic import BaseModel

from rag_ci.judges.providers.base import (
    Completion,
    ProviderSettings,
    parse_raw,
    request_budget,
    transport_failure,
)
from rag_ci.judges.providers.schemas import strict_json_schema
from rag_ci.judges.retry import Failure, is_retryable_status, parse_retry_after

# Reasoning models reject `temperature`; they are deterministic only as far as the API allows.
_NO_TEMPERATURE_PREFIXES = ("o1", "o3", "o4", "gpt-5")


class OpenAIChat:
    def __init__(self, settings: ProviderSettings, *, client: bool = True):
        import openai

        self._openai = openai
        self._model = settings.model
        self._temperature = (
            None if settings.model.startswith(_NO_TEMPERATURE_PREFIXES) else settings.temperature
        )
        if not client:  # a subclass builds its own (AzureOpenAIChat)
            return
        # Local servers ignore the key, but the SDK refuses to start without one.
        self._client: openai.AsyncOpenAI = openai.AsyncOpenAI(
            api_key=settings.api_key or "not-needed",
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
        )

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        kwargs: dict = {}
        if schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.__name__,
                    "schema": strict_json_schema(schema),
                    "strict": True,
                },
            }
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        raw = await self._client.chat.completions.with_raw_response.create(
            model=self._model, messages=[{"role": "user", "content": prompt}], **kwargs
        )
        response = await parse_raw(raw)
        usage = response.usage
        return Completion(
            text=response.choices[0].message.content if response.choices else None,
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            rate_limit=request_budget(
                raw.headers, "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests"
            ),
            model=response.model or None,
        )

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._openai.APIStatusError):
            status = exc.status_code
            return Failure(
                f"HTTP {status} from the judge: {_short(exc.message)}",
                retryable=is_retryable_status(status),
                status=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        if isinstance(exc, self._openai.APIConnectionError):  # includes APITimeoutError
            return Failure(f"{type(exc).__name__}: {exc}", retryable=True)
        return transport_failure(exc)

    async def aclose(self) -> None:
        await self._client.close()


def _short(text: object, limit: int = 300) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"
