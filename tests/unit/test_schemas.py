"""The JSON Schemas of rag-ci.yml and questions.yml: generated from the models, shipped as
files, accepted by the example and strict about unknown keys (as `rag-ci validate` is)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.core.base.yamlsrc import load_yaml_fast
from rag_ci.core.questionset.schemas import FILES, json_schema, schema_text

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "rag_ci" / "schemas"


def validator(which: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SHIPPED / FILES[which]).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(which: str, data: object) -> list[str]:
    return [e.message for e in validator(which).iter_errors(data)]


@pytest.mark.parametrize("which", FILES)
def test_the_shipped_schema_is_the_one_the_models_generate_and_the_command_prints(which):
    assert (SHIPPED / FILES[which]).read_text(encoding="utf-8") == schema_text(which), (
        "regenerate: rag-ci schema config > rag_ci/schemas/rag-ci.schema.json; rag-ci schema questions > rag_ci/schemas/questions.schema.json"
    )
    printed = CliRunner().invoke(cli, ["schema", which])
    assert printed.exit_code == 0 and printed.output == schema_text(which)


def test_the_example_config_and_questions_are_valid():
    assert errors("config", load_yaml_fast((REPO / "examples" / "rag-ci.yml").read_text())) == []
    assert errors("config", load_yaml_fast((REPO / "examples" / "rag-ci.docker.yml").read_text())) == []
    assert errors("questions", load_yaml_fast((REPO / "examples" / "questions.yml").read_text())) == []


def test_a_config_with_an_unknown_key_is_refused():
    config = load_yaml_fast((REPO / "examples" / "rag-ci.yml").read_text())
    assert any(
        "'treshold' was unexpected" in e for e in errors("config", {**config, "gate": {"treshold": 0.5}})
    )
    assert any(
        "'judgee' was unexpected" in e for e in errors("config", {**config, "judgee": {"provider": "none"}})
    )
    assert errors("config", {**config, "target": {"kind": "nonsense"}})


def test_a_question_file_follows_the_validator():
    # one string or a list, as the loader takes
    one = {
        "id": "Q1",
        "question": "What?",
        "doc_id": "du2",
        "sources": ["du2/a.md"],
    }
    assert errors("questions", {"version": 1, "questions": [one]}) == []
    assert errors("questions", {"version": 1, "questions": [{**one, "refrence": "typo"}]})
    assert errors("questions", {"version": 1, "questions": []})  # non-empty
    assert errors("questions", {"version": 0, "questions": [one]})  # a positive integer
    assert errors("questions", {"version": 1, "questions": [one], "extra": 1})  # no other top-level field
    assert errors("questions", {"version": 1, "questions": [{**one, "expect": "maybe"}]})


def test_the_schema_command_refuses_an_unknown_name():
    result = CliRunner().invoke(cli, ["schema", "nope"])
    assert result.exit_code == 2
    with pytest.raises(ValueError):
        json_schema("nope")


def test_the_pre_commit_hook_runs_rag_ci_validate():
    hooks = load_yaml_fast((REPO / ".pre-commit-hooks.yaml").read_text())
    [hook] = [h for h in hooks if h["id"] == "rag-ci-validate"]
    assert (
        hook["entry"] == "rag-ci validate"
        and hook["language"] == "python"
        and hook["pass_filenames"] is False
    )
    assert "validate" in cli.commands
