"""The settings and credentials of the cloud providers, resolved before the run's first call.

A missing one is an error before anything is asked (exit 2), naming the provider and what to
set; a wrong one is refused by the provider on the first call, and the run stops the same way
(`credentials_hint`, used by rag_ci.judges.client). Where rag-ci.yml leaves a setting out, the
variable the cloud's own tools read supplies it (`AWS_REGION`, `GOOGLE_CLOUD_PROJECT`).
Credentials are read from `env` (the environment, with the action's inputs over it), never
printed: the variables are the redactor's known secrets (rag_ci.core.config.providers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rag_ci.core.config import ModelConfig
from rag_ci.core.config.cloud import DEFAULT_AZURE_API_VERSION
from rag_ci.errors import RagCiError

_AWS_KEYS = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
}

_HINTS = {
    "azure-openai": "set AZURE_OPENAI_API_KEY (the resource's key) or AZURE_OPENAI_AD_TOKEN (an Entra ID "
    "token for https://cognitiveservices.azure.com, e.g. after azure/login), with access to the deployment",
    "bedrock": "set AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or "
    "aws-actions/configure-aws-credentials by OIDC) allowed bedrock:InvokeModel on the model",
    "vertex": "set GOOGLE_OAUTH_ACCESS_TOKEN or application-default credentials (google-github-actions/auth "
    "by OIDC, GOOGLE_APPLICATION_CREDENTIALS) with the Vertex AI User role on the project",
}


def credentials_hint(provider: str, role: str = "judge") -> str | None:
    """What to set when `provider` refuses the credentials (None: not a cloud provider)."""
    hint = _HINTS.get(provider)
    return None if hint is None else f"{role} provider '{provider}' refused the credentials: {hint}"


def cloud_settings(
    model: ModelConfig, api_key: str | None, env: Mapping[str, str], role: str = "judge"
) -> dict[str, Any]:
    """The provider's settings (ProviderSettings.cloud); RagCiError when one is missing."""
    if model.provider == "azure-openai":
        token = env.get("AZURE_OPENAI_AD_TOKEN") or None
        if not api_key and not token:
            raise RagCiError(f"{role} provider 'azure-openai' has no credentials: {_HINTS['azure-openai']}")
        return {
            "deployment": model.deployment,
            "api_version": model.api_version or DEFAULT_AZURE_API_VERSION,
            "token": None if api_key else token,
        }
    if model.provider == "bedrock":
        return _bedrock(model, env, role)
    if model.provider == "vertex":
        return _vertex(model, api_key, env, role)
    return {}


def _bedrock(model: ModelConfig, env: Mapping[str, str], role: str) -> dict[str, Any]:
    region = model.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region:
        raise RagCiError(f"{role} provider 'bedrock' needs a region: set `{role}.region` or AWS_REGION")
    keys = {arg: env[name] for name, arg in _AWS_KEYS.items() if env.get(name)}
    if keys and not {"aws_access_key_id", "aws_secret_access_key"} <= set(keys):
        raise RagCiError(
            f"{role} provider 'bedrock': AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together; {_HINTS['bedrock']}"
        )
    if not keys:  # the rest of the chain: a profile, a web identity token, a container or instance role
        import botocore.session

        if botocore.session.Session().get_credentials() is None:
            raise RagCiError(f"{role} provider 'bedrock' found no AWS credentials: {_HINTS['bedrock']}")
    return {"region": region, "aws_credentials": keys or None}


def _vertex(model: ModelConfig, token: str | None, env: Mapping[str, str], role: str) -> dict[str, Any]:
    project = model.project or env.get("GOOGLE_CLOUD_PROJECT")
    location = model.location or env.get("GOOGLE_CLOUD_LOCATION") or "us-central1"
    if not project:
        raise RagCiError(
            f"{role} provider 'vertex' needs a project: set `{role}.project` or GOOGLE_CLOUD_PROJECT"
        )
    settings: dict[str, Any] = {"project": project, "location": location}
    if not token:
        import google.auth
        import google.auth.exceptions

        try:
            settings["google_credentials"], _ = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        except google.auth.exceptions.DefaultCredentialsError:
            raise RagCiError(
                f"{role} provider 'vertex' found no Google credentials: {_HINTS['vertex']}"
            ) from None
    return settings
