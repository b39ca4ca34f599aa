"""The `DeepEvalBaseLLM` adapter DeepEval's metrics receive: it forwards to `JudgeClient`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rag_ci.judges.call_context import current_call
from rag_ci.judges.client import JudgeClient
from rag_ci.judges.env import prepare_deepeval_environment

prepare_deepeval_environment()

from deepeval.models import DeepEvalBaseLLM  # noqa: E402  (after the environment is prepared)


class RagCiJudgeModel(DeepEvalBaseLLM):
    """What DeepEval's metrics see as their model. Async only: rag-ci never calls `measure()`."""

    def __init__(self, client: JudgeClient, model_name: str):
        self._client = client
        self._model_name = model_name
        super().__init__(model_name)

    # DeepEval types it as returning a DeepEvalBaseLLM; it only stores what comes back.
    def load_model(self, *args, **kwargs) -> JudgeClient:  # type: ignore[override]
        return self._client

    def generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs) -> Any:
        raise NotImplementedError("rag-ci's judge is async-only; use a_measure()")

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs) -> Any:
        return await self.a_generate_with_schema(prompt, schema)

    # DeepEval calls this one; overriding it directly skips DeepEval's tracing wrapper
    # around a_generate (no trace is ever active here).
    async def a_generate_with_schema(  # type: ignore[override]  # DeepEval passes `schema` by keyword
        self, prompt: str, schema: type[BaseModel] | None = None, **kwargs
    ) -> Any:
        log = current_call().calls
        if log is None:
            return await self._client.call(prompt, schema)
        key, replayed = log.lookup(prompt, schema)
        if replayed is not None:
            return replayed
        log.before_call()
        reply = await self._client.call(prompt, schema, fresh=log.fresh)
        log.record(key, reply, schema)
        return reply

    def get_model_name(self, *args, **kwargs) -> str:
        return self._model_name
