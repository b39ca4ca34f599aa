"""One provider, one row: the facts table (rag_ci/core/config/providers.py) and everything that
reads the providers by name agree — the judges' registry, the pinning rules, the config's field,
the JSON Schema's enum, pyproject's extras and the docs."""

from __future__ import annotations

import json
import tomllib
from typing import get_args

import pytest
from pydantic import ValidationError

from builders import REPO
from fakes.judge_servers import SERVERS
from fakes.judge_setup import CLOUD_SETTINGS, FAKE_KEYS, JUDGE_MODELS
from rag_ci.core.config import JudgeConfig, WriterConfig
from rag_ci.core.config.providers import PROVIDER_NAMES, PROVIDERS, PinRule, takes_model
from rag_ci.judges import pinning
from rag_ci.judges.providers import PROVIDERS as REGISTRY


def test_every_provider_of_the_table_has_a_class_in_the_judges_registry_and_no_other_has():
    assert list(REGISTRY) == list(PROVIDERS)
    for name, spec in REGISTRY.items():
        assert spec.facts is PROVIDERS[name]
        module, _, cls = spec.implementation.partition(":")
        assert module.startswith("rag_ci.judges.") and cls, spec.implementation


@pytest.mark.parametrize("model", [JudgeConfig, WriterConfig])
def test_the_config_field_accepts_exactly_the_table_and_none(model):
    assert get_args(model.model_fields["provider"].annotation) == PROVIDER_NAMES
    for name in PROVIDER_NAMES:
        if takes_model(name):
            with pytest.raises(ValidationError, match=r"\.model is required"):
                model(provider=name)
        model(provider=name, model="m-1" if takes_model(name) else None, **_cloud(name))
    with pytest.raises(ValidationError, match="Input should be 'openai'"):
        model(provider="no-such-provider", model="m-1")


def _cloud(provider: str) -> dict:
    """The settings a cloud provider needs in rag-ci.yml (the others come from the environment)."""
    endpoint = {"base_url": "https://res.openai.azure.com"} if provider == "azure-openai" else {}
    return {**CLOUD_SETTINGS.get(provider, {}), **endpoint}


@pytest.mark.parametrize("model", [JudgeConfig, WriterConfig])
def test_a_cloud_setting_belongs_to_its_provider_and_azure_needs_its_endpoint_and_deployment(model):
    role = "writer" if model is WriterConfig else "judge"
    assert {n for f in PROVIDERS.values() for n in f.cloud} == {
        "deployment",
        "api_version",
        "region",
        "project",
        "location",
    }
    with pytest.raises(
        ValidationError, match=rf"{role}\.region is a setting of provider 'bedrock', not of 'openai'"
    ):
        model(provider="openai", model="m-1", region="us-east-1")
    with pytest.raises(ValidationError, match=rf"{role}\.deployment is required for provider 'azure-openai'"):
        model(provider="azure-openai", model="m-1", base_url="https://res.openai.azure.com")
    with pytest.raises(ValidationError, match=rf"{role}\.base_url is required for provider 'azure-openai'"):
        model(provider="azure-openai", model="m-1", deployment="judge")


def test_the_shipped_schema_enumerates_the_table():
    schema = json.loads((REPO / "rag_ci" / "schemas" / "rag-ci.schema.json").read_text(encoding="utf-8"))
    enums = [
        definition["properties"]["provider"]["enum"]
        for definition in schema["$defs"].values()
        if "provider" in definition.get("properties", {})
    ]
    assert enums and all(enum == list(PROVIDER_NAMES) for enum in enums)


def test_the_docs_name_every_provider():
    judges = (REPO / "docs" / "judges.md").read_text(encoding="utf-8")
    configuration = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in PROVIDER_NAMES:
        assert f"| `{name}` |" in judges, name
        assert f"`{name}`" in configuration, name


def test_every_extra_is_one_of_pyprojects():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    for facts in PROVIDERS.values():
        assert facts.extra in extras, facts.name
        assert any(dep.startswith("deepeval") for dep in extras[facts.extra]), facts.name


def test_every_pin_rule_has_a_rule():
    assert set(pinning._RULES) == set(get_args(PinRule))
    assert {facts.pin_rule for facts in PROVIDERS.values()} <= set(pinning._RULES)


def test_every_provider_serving_models_has_a_fake_server_a_pinned_model_and_a_fake_key_in_the_tests():
    serving = {name for name, facts in PROVIDERS.items() if facts.takes_model}
    assert set(SERVERS) == serving, "tests/fakes/judge_servers.py: SERVERS"
    assert set(JUDGE_MODELS) == serving, "tests/fakes/judge_setup.py: JUDGE_MODELS"
    keys = {facts.api_key_env for facts in PROVIDERS.values() if facts.key_required}
    assert keys <= set(FAKE_KEYS), "tests/fakes/judge_setup.py: FAKE_KEYS"


def test_every_key_variable_is_kept_from_the_target_and_every_key_input_reaches_it():
    from rag_ci.action.settings import JUDGE_KEY_VARIABLES
    from rag_ci.targets.processes import passed_env

    keys = {facts.api_key_env for facts in PROVIDERS.values() if facts.api_key_env}
    # A `pass_env` wildcard never hands a provider's key to the user's RAG (rag_ci/targets/processes.py).
    assert passed_env(["*"], dict.fromkeys(keys, "secret")) == {}
    action = (REPO / "action.yml").read_text(encoding="utf-8")
    for facts in PROVIDERS.values():
        if facts.action_input is not None:
            variable = f"RAG_CI_{facts.api_key_env}"
            assert JUDGE_KEY_VARIABLES.get(variable) == facts.api_key_env, "rag_ci/action/settings.py"
            assert f"\n  {facts.action_input}:" in action, "action.yml: the input"
            assert f"{variable}: ${{{{ inputs.{facts.action_input} }}}}" in action, "action.yml: its variable"
