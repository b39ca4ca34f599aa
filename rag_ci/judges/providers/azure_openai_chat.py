"""Azure OpenAI: chat completions on a deployment, through the openai SDK's `AsyncAzureOpenAI`.

The SDK speaks Azure's REST paths (`/openai/deployments/{deployment}/chat/completions?api-version=…`)
and its headers (`api-key` for a resource key, `Authorization: Bearer` for an Entra ID token), so
only what it lacks is here: a deployment is named by its owner, and the model behind it may be
swapped without the name changing, so every reply's `model` (the model version Azure ran) is
checked against the pinned `judge.model`: a reply from another model fails its metric, never
silently joins the verdicts of the pinned one. Content-filter refusals (HTTP 400, code
`content_filter`) are not retried.
"""

from __future__ import annotations

from pydantic import BaseModel

from rag_ci.judges.providers.base import Completion, ProviderSettings
from rag_ci.judges.providers.openai_chat import OpenAIChat
from rag_ci.judges.retry import Failure


class DeploymentServesAnotherModel(RuntimeError):
    """The deployment answered with a model other than the pinned one."""


class AzureOpenAIChat(OpenAIChat):
    def __init__(self, settings: ProviderSettings):
        import openai

        super().__init__(settings, client=False)
        self._deployment = settings.cloud["deployment"]
        self._client = openai.AsyncAzureOpenAI(
            azure_endpoint=settings.base_url or "",  # required by the config for this provider
            azure_deployment=self._deployment,
            api_version=settings.cloud["api_version"],
            api_key=settings.api_key,
            azure_ad_token=settings.cloud.get("token"),
            timeout=settings.timeout_s,
            max_retries=0,
        )

    async def complete(self, prompt: str, schema: type[BaseModel] | None) -> Completion:
        completion = await super().complete(prompt, schema)
        if completion.model and not _same_model(completion.model, self._model):
            raise DeploymentServesAnotherModel(
                f"the deployment '{self._deployment}' answered with model '{completion.model}', not the "
                f"pinned judge.model '{self._model}': set judge.model to the deployment's model version"
            )
        return completion

    def classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, DeploymentServesAnotherModel):
            return Failure(str(exc), retryable=False)
        return super().classify(exc)


def _same_model(reported: str, pinned: str) -> bool:
    """Azure reports the version it ran (`gpt-4o-2024-08-06`), some API versions the bare name."""
    reported, pinned = reported.lower(), pinned.lower()
    return pinned == reported or pinned.startswith(reported + "-")
