"""Amazon Bedrock's Converse API (`POST /model/{modelId}/converse`) through boto3.

boto3 brings what must not be written by hand: the AWS credential chain (keys, profiles, the
web identity token `aws-actions/configure-aws-credentials` leaves for OIDC, instance roles)
and the SigV4 signature of every request. Its retries are off (`total_max_attempts: 1`): rag-ci's
client retries, honouring Retry-After, like every provider's. boto3 is synchronous, so each
call runs in a worker thread; its connection pool is as large as the judge's concurrency may
grow. Structured output: a forced tool whose input schema is the reply, for the models whose
Converse accepts a named `toolChoice` (Anthropic, Mistral, Amazon Nova); the others answer in
text, parsed as JSON like every provider's text.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from rag_ci.judges.families import family_of
from rag_ci.judges.providers.base import Completion, ProviderSettings, transport_failure
from rag_ci.judges.providers.openai_chat import _short
from rag_ci.judges.providers.schemas import strict_json_schema
from rag_ci.judges.retry import Failure, is_retryable_status, parse_retry_after

MAX_TOKENS = 4096
_FORCED_TOOL_FAMILIES = frozenset({"anthropic", "mistral", "amazon"})
# Error codes of Converse that a later attempt may not meet (the others are the request's fault).
_RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalServerException",
    }
)


class BedrockConverse:
    def __init__(self, settings: ProviderSettings):
        import boto3
        import botocore.config
        import botocore.exceptions

        self._errors = botocore.exceptions
        self._model = settings.model
        self._temperature = settings.temperature
        self._forced_tool = family_of(settings.model) in _FORCED_TOOL_FAMILIES
        credentials: dict[str, Any] = settings.cloud.get("aws_credentials") or {}
        session = boto3.session.Session(region_name=settings.cloud["region"], **credentials)
        self._client = session.client(
            "bedrock-runtime",
            endpoint_url=settings.base_url,
            config=botocore.config.Config(
                retries={"total_max_attempts": 1, "mode": "standard"},  # one attempt, no retry
                connect_timeout=settings.timeout_s,
                read_timeout=settings.timeout_s,
                max_pool_connections=256,
            ),
        )

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        request: dict[str, Any] = {
            "modelId": self._model,
            "messages": [{"role": "user", "content": [{"text": prompt}]}],
            "inferenceConfig": {"temperature": self._temperature, "maxTokens": MAX_TOKENS},
        }
        if schema is not None and self._forced_tool:
            request["toolConfig"] = {
                "tools": [
                    {
                        "toolSpec": {
                            "name": schema.__name__,
                            "description": "Return your answer as the arguments of this tool.",
                            "inputSchema": {"json": strict_json_schema(schema)},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": schema.__name__}},
            }
        response = await asyncio.to_thread(self._client.converse, **request)
        data, texts = None, []
        for block in response.get("output", {}).get("message", {}).get("content", []):
            if "toolUse" in block:
                data = block["toolUse"].get("input")
            elif "text" in block:
                texts.append(block["text"])
        usage = response.get("usage", {})
        return Completion(
            text="".join(texts) or None,
            data=data,
            input_tokens=usage.get("inputTokens") or 0,
            output_tokens=usage.get("outputTokens") or 0,
        )

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, self._errors.ClientError):
            error = exc.response.get("Error", {})
            meta = exc.response.get("ResponseMetadata", {})
            status = meta.get("HTTPStatusCode")
            code = error.get("Code", "")
            return Failure(
                f"HTTP {status} from the judge: {code}: {_short(error.get('Message', ''))}",
                retryable=code in _RETRYABLE_CODES or is_retryable_status(status),
                status=status,
                retry_after_s=parse_retry_after(meta.get("HTTPHeaders")),
            )
        if isinstance(exc, (self._errors.ConnectionError, self._errors.ReadTimeoutError)):
            return Failure(f"{type(exc).__name__}: {exc}", retryable=True)
        return transport_failure(exc)

    async def aclose(self) -> None:
        self._client.close()
