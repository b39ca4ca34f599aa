"""The settings of the providers that run in a company's cloud (Azure OpenAI, Bedrock, Vertex AI).

Each provider names the ones it reads in its row of the provider table (`cloud`,
rag_ci/core/config/providers.py); a setting another provider would ignore is refused, so a
`region:` left over from a Bedrock judge never silently means nothing. What the environment
may supply instead (`AWS_REGION`, `GOOGLE_CLOUD_PROJECT`) is read where the judge is built.

Pure data: no I/O.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rag_ci.core.config.providers import PROVIDERS

# Azure OpenAI's GA data-plane version; a newer one is set with `api_version`.
DEFAULT_AZURE_API_VERSION = "2024-10-21"

DEPLOYMENT: Any = Field(
    None,
    description="`azure-openai`: the deployment's name (the model it serves is `model`, checked against the replies).",
)
API_VERSION: Any = Field(
    None,
    description=f"`azure-openai`: the REST API version. Default: {DEFAULT_AZURE_API_VERSION}.",
)
REGION: Any = Field(None, description="`bedrock`: the AWS region (e.g. `us-east-1`). Default: `AWS_REGION`.")
PROJECT: Any = Field(
    None, description="`vertex`: the Google Cloud project id. Default: `GOOGLE_CLOUD_PROJECT`."
)
LOCATION: Any = Field(
    None,
    description="`vertex`: the location (e.g. `us-central1`, `europe-west4`, `global`). Default: `GOOGLE_CLOUD_LOCATION`, else `us-central1`.",
)

CLOUD_SETTINGS = ("deployment", "api_version", "region", "project", "location")
# Required in rag-ci.yml: the rest may come from the environment, or has a default.
_REQUIRED = {"azure-openai": ("base_url", "deployment")}


def cloud_problem(role: str, provider: str, values: dict[str, Any]) -> str | None:
    """What is wrong with the cloud settings of `role` (judge, writer) for `provider`, or None."""
    facts = PROVIDERS.get(provider)
    wanted = facts.cloud if facts else ()
    stray = [name for name in CLOUD_SETTINGS if values.get(name) is not None and name not in wanted]
    if stray:
        owners = {n: p for p, f in PROVIDERS.items() for n in f.cloud}
        return f"{role}.{stray[0]} is a setting of provider '{owners[stray[0]]}', not of '{provider}'"
    for name in _REQUIRED.get(provider, ()):
        if not values.get(name):
            return f"{role}.{name} is required for provider '{provider}'"
    return None
