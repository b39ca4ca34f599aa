"""Anthropic messages API; structured output by forcing one tool whose input schema is the reply.

Forced tool use makes the model emit arguments that match the schema, instead of
hoping prose contains a JSON object.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rag_ci.judges.providers.base import (
    Completion,
    ProviderSettings,
    parse_raw,
    request_budget,
    transport_failure,
)
from rag_ci.judges.providers.openai_chat import _short
from rag_ci.judges.providers.schemas import strict_json_schema
from rag_ci.judges.retry import Failure, is_retryable_status, parse_retry_after

MAX_TOKENS = 4096  # required by the API; metric replies are far shorter


class AnthropicMessages:
    def __init__(self, settings: ProviderSettings):
        import anthropic

        self._anthropic = anthropic
        self._model = settings.model
        self._temperature = settings.temperature
        self._client = self._make_client(settings)

    def _make_client(self, settings: ProviderSettings) -> Any:
        return self._anthropic.AsyncAnthropic(
            api_key=settings.api_key, base_url=settings.base_url, timeout=settings.timeout_s, max_retries=0
        )

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        kwargs: dict = {}
        if schema is not None:
            kwargs["tools"] = [
                {
                    "name": schema.__name__,
                    "description": "Return your answer as the arguments of this tool.",
                    "input_schema": strict_json_schema(schema),
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": schema.__name__}
        raw = await self._client.messages.with_raw_response.create(
            model=self._model,
            max_tokens=MAX_TOKENS,
            messages=[{"role": "user", "content": prompt}],
            # Sent as a raw body field: recent SDKs dropped the `temperature` argument,
            # the API still honours it for the models a judge uses.
            extra_body={"temperature": self._temperature},
            **kwargs,
        )
        response = await parse_raw(raw)
        data = None
        texts = []
        for block in response.content:
            if block.type == "tool_use":
                data = block.input
            elif block.type == "text":
                texts.append(block.text)
        usage = response.usage
        return Completion(
            text="".join(texts) or None,
            data=data,
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            rate_limit=request_budget(
                raw.headers, "anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining"
            ),
        )

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._anthropic.APIStatusError):
            status = exc.status_code
            return Failure(
                f"HTTP {status} from the judge: {_short(exc.message)}",
                retryable=is_retryable_status(status),  # 529 overloaded included
                status=status,
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        if isinstance(exc, self._anthropic.APIConnectionError):
            return Failure(f"{type(exc).__name__}: {exc}", retryable=True)
        return transport_failure(exc)

    async def aclose(self) -> None:
        await self._client.close()
