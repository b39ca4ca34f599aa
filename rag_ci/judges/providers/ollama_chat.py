"""Ollama `/api/chat` through the official `ollama` client, with `format` set to the reply's JSON schema."""

from __future__ import annotations

from pydantic import BaseModel

from rag_ci.judges.providers.base import Completion, ProviderSettings, transport_failure
from rag_ci.judges.providers.openai_chat import _short
from rag_ci.judges.providers.schemas import strict_json_schema
from rag_ci.judges.retry import Failure, is_retryable_status


class OllamaChat:
    def __init__(self, settings: ProviderSettings):
        import ollama

        self._ollama = ollama
        self._model = settings.model
        self._temperature = settings.temperature
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else None
        self._client = ollama.AsyncClient(host=settings.base_url, timeout=settings.timeout_s, headers=headers)

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        response = await self._client.chat(
            model=self._model,
            messages=[{"role": "user", "content": prompt}],
            format=strict_json_schema(schema) if schema is not None else None,
            options={"temperature": self._temperature},
        )
        return Completion(
            text=response.message.content,
            input_tokens=response.prompt_eval_count or 0,
            output_tokens=response.eval_count or 0,
        )

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._ollama.ResponseError):
            status = exc.status_code if exc.status_code and exc.status_code > 0 else None
            return Failure(
                f"HTTP {status} from the judge: {_short(exc.error)}",
                retryable=status is None or is_retryable_status(status),
                status=status,
            )
        return transport_failure(exc)

    async def aclose(self) -> None:
        await self._client.close()
