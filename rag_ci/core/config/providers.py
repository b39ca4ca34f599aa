"""The model providers rag-ci knows, one row each: the facts every layer reads by name.

The config's `provider` field (and so the JSON Schema's enum and docs/configuration.md), the
provider table of docs/judges.md (written by scripts/docs_gen.py), the judges' registry
(rag_ci.judges.providers: it adds the code that speaks to the API), the pinning rules and the
baseline's key notes all read this table. The core cannot import the judges package (the
layers in pyproject.toml), so the facts live here and the judges' entries are built from them;
tests/unit/test_provider_table.py fails when the two registries or the docs drift apart.

Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

# How a model id is told to be pinned (rag_ci.judges.pinning holds one rule per name):
# - dated_snapshot: the lab's API naming, where undated names float (gpt-4o, claude-sonnet-4-5);
# - served_weights: a server of open weights: the lab's rules, but a Mistral name is fixed weights;
# - ollama_tag: an explicit tag other than `latest`;
# - one_model: the provider has a single model (the fake), nothing to pin.
PinRule = Literal["dated_snapshot", "served_weights", "ollama_tag", "one_model"]


@dataclass(frozen=True)
class ProviderFacts:
    name: str
    extra: str  # pip install 'rag-ci-gate[<extra>]' brings its SDK (an extra of pyproject.toml)
    sdk_modules: tuple[str, ...]  # found (not imported) to tell the extra is installed
    api_key_env: str | None  # the variable the key is read from by default; `api_key_env` overrides
    key_required: bool
    # Self-hosted: a model without a known price costs nothing (unless `prices` says otherwise).
    self_hosted: bool
    # Its models run where it runs, under its own names: free even when a name matches a hosted
    # model's price (an OpenAI-compatible server may be a proxy to a paid API; Ollama is not).
    always_free: bool
    pin_rule: PinRule
    serves: str  # for docs/judges.md: its default endpoint and `base_url` examples
    takes_model: bool = True  # False: the provider has one model and `model` stays unset
    action_input: str | None = None  # the GitHub Action's input that passes the key (action.yml)
    # Other variables holding its credentials (a short-lived token, a cloud's secret key):
    # redacted, and never handed to the target by a `pass_env` wildcard, like the key variable.
    secret_envs: tuple[str, ...] = ()
    # The cloud settings it needs (rag_ci/core/config/cloud.py: `deployment`, `region`...).
    cloud: tuple[str, ...] = ()


# In the order the config's enum lists them.
PROVIDERS: dict[str, ProviderFacts] = {
    facts.name: facts
    for facts in (
        ProviderFacts(
            "openai",
            "openai",
            ("openai",),
            "OPENAI_API_KEY",
            key_required=True,
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="api.openai.com; `base_url` for a proxy, e.g. `https://my-proxy/v1`",
            action_input="openai-api-key",
        ),
        ProviderFacts(
            "anthropic",
            "anthropic",
            ("anthropic",),
            "ANTHROPIC_API_KEY",
            key_required=True,
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="api.anthropic.com",
            action_input="anthropic-api-key",
        ),
        ProviderFacts(
            "gemini",
            "gemini",
            ("google.genai",),
            "GOOGLE_API_KEY",
            key_required=True,
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="generativelanguage.googleapis.com",
            action_input="google-api-key",
        ),
        ProviderFacts(
            "ollama",
            "ollama",
            ("ollama",),
            None,
            key_required=False,
            self_hosted=True,
            always_free=True,
            pin_rule="ollama_tag",
            serves="`http://127.0.0.1:11434`; `base_url` e.g. `http://gpu-box:11434` (a key in `api_key_env` is sent as a bearer token)",
        ),
        ProviderFacts(
            "openai-compatible",
            "openai",
            ("openai",),
            None,
            key_required=False,
            self_hosted=True,
            always_free=False,
            pin_rule="served_weights",
            serves="`base_url` required: vLLM `http://127.0.0.1:8000/v1`, llama.cpp `http://127.0.0.1:8080/v1`, LM Studio `http://127.0.0.1:1234/v1`",
        ),
        # The clouds companies run their models in (docs/judges.md, "Judges in your cloud"):
        # credentials by OIDC in CI, the model's family follows the model, not the cloud.
        ProviderFacts(
            "azure-openai",
            "azure",
            ("openai",),
            "AZURE_OPENAI_API_KEY",
            key_required=False,  # or an Entra ID token
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="`base_url` your resource's endpoint `https://NAME.openai.azure.com`, `deployment`, `api_version`; an API key or an Entra ID token (`AZURE_OPENAI_AD_TOKEN`)",
            secret_envs=("AZURE_OPENAI_AD_TOKEN",),
            cloud=("deployment", "api_version"),
        ),
        ProviderFacts(
            "bedrock",
            "bedrock",
            ("botocore",),
            None,
            key_required=False,  # the AWS credential chain
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="Amazon Bedrock's Converse API in `region` (or `AWS_REGION`): a model id or inference profile; the AWS credential chain",
            secret_envs=("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"),
            cloud=("region",),
        ),
        ProviderFacts(
            "vertex",
            "vertex",
            ("google.genai", "google.auth"),
            "GOOGLE_OAUTH_ACCESS_TOKEN",
            key_required=False,  # else application-default credentials
            self_hosted=False,
            always_free=False,
            pin_rule="dated_snapshot",
            serves="Google Vertex AI in `project` and `location`: Gemini (`generateContent`) and Claude (`rawPredict`); an access token or application-default credentials",
            cloud=("project", "location"),
        ),
        # A dry run, not a judge: DeepEval's prompts answered in-process by a fixed policy (docs/judges.md).
        ProviderFacts(
            "fake",
            "deepeval",
            (),
            None,
            key_required=False,
            self_hosted=True,
            always_free=True,
            pin_rule="one_model",
            serves="nothing: a dry run answered in-process, never a gate ([below](#a-dry-run-the-fake-judge))",
            takes_model=False,
        ),
    )
}

# `none` is no provider: the judge (or writer) is off.
PROVIDER_NAMES: tuple[str, ...] = (*PROVIDERS, "none")

# The config field's type. mypy needs a literal type written out; pydantic reads the names from
# the table at run time, so the enum, its error message and the docs list exactly these.
if TYPE_CHECKING:
    ProviderName = str
else:
    ProviderName = Literal[PROVIDER_NAMES]


def takes_model(provider: str) -> bool:
    """Whether `model` must be set for `provider` (`none` and the one-model providers take none)."""
    facts = PROVIDERS.get(provider)
    return facts is not None and facts.takes_model
