"""The seam between rag-ci's judge adapter and one provider's official SDK client.

A provider sends one prompt, asks for JSON matching a schema in its own dialect
(OpenAI `response_format` json_schema, Anthropic forced tool use, Gemini
`response_json_schema`, Ollama `format`), and reports token usage. It makes one
attempt: retries, the concurrency limit and the time-out live in
`rag_ci.judges.llm`, so all providers behave alike.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from rag_ci.judges.retry import Failure


@dataclass(frozen=True)
class ProviderSettings:
    model: str
    temperature: float
    base_url: str | None
    api_key: str | None
    timeout_s: float
    # A cloud provider's settings and credentials (rag_ci.judges.cloud_settings): deployment,
    # api_version, region, project, location, an Entra ID token, AWS credentials.
    cloud: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Completion:
    """One reply. `data` is already-parsed JSON when the wire format carries it (tool use)."""

    text: str | None
    data: Any = None
    input_tokens: int = 0
    output_tokens: int = 0
    rate_limit: RequestBudget | None = None  # from the reply's rate-limit headers, when sent
    model: str | None = None  # the model the reply says answered, when it says


@dataclass(frozen=True)
class RequestBudget:
    """The provider's request rate limit as its headers report it (per minute, usually)."""

    limit: int
    remaining: int


async def parse_raw(raw: Any) -> Any:
    """The SDK object of a `with_raw_response` reply (parse() is sync in some SDK versions, async in others)."""
    parsed = raw.parse()
    return await parsed if inspect.isawaitable(parsed) else parsed


def request_budget(headers: Any, limit_header: str, remaining_header: str) -> RequestBudget | None:
    try:
        limit, remaining = headers.get(limit_header), headers.get(remaining_header)
        if limit is None or remaining is None:
            return None
        return RequestBudget(int(float(limit)), int(float(remaining)))
    except (AttributeError, TypeError, ValueError):
        return None


class ChatProvider(Protocol):
    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        """One attempt; raises the SDK's exception on failure."""

    def classify(self, exc: BaseException) -> Failure | None:
        """A provider/transport failure, or None when `exc` is not one (a bug: re-raise)."""

    async def aclose(self) -> None:
        """Close the SDK client and its connection pool."""


def transport_failure(exc: BaseException) -> Failure | None:
    """Time-outs and connection errors of any HTTP stack (httpx, httpx2, aiohttp...): retryable."""
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return Failure(f"{type(exc).__name__}: {exc}".rstrip(": "), retryable=True)
    for cls in type(exc).__mro__:
        name = cls.__name__
        if "Timeout" in name or name in (
            "ConnectError",
            "ReadError",
            "RemoteProtocolError",
            "NetworkError",
            "TransportError",
            "ClientConnectionError",
            "ServerDisconnectedError",
        ):
            return Failure(f"{type(exc).__name__}: {exc}".rstrip(": "), retryable=True)
    return None
