"""JSON Schemas of the two files a user writes, generated from the models that validate them:
rag-ci.yml (`Config`) and questions.yml (`QuestionFile`, the shape `parse_question_set` checks).

Editors read them through a first line `# yaml-language-server: $schema=<URL>` (the YAML
language server: VS Code's YAML extension, Neovim, Helix...) and complete and check as one
types. `rag-ci schema config|questions` prints them; the same text is committed in
rag_ci/schemas/ and shipped in the wheel (tests/unit/test_schemas.py keeps both equal).

The schema is what an editor can check; `rag-ci validate` checks more (ids unique, doc_ids in
the routing table, drafts, the cross-field rules of the config). Pure.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rag_ci.core.config import Config
from rag_ci.core.questionset.conversations import Conversation
from rag_ci.core.questionset.questions import Question, QuestionSetVersion

SCHEMA_BASE_URL = "https://raw.githubusercontent.com/rag-ci/rag-ci/main/rag_ci/schemas/"
FILES = {"config": "rag-ci.schema.json", "questions": "questions.schema.json"}
# Fields the models also take as one string for a list of one (their `mode="before"` validators).
_ONE_OR_MANY = {
    "Question": ("doc_id", "sources", "keywords", "tags"),
    "Provenance": ("passage_hash",),
    "Turn": ("doc_id", "sources", "keywords"),
    "Conversation": ("doc_id", "tags"),
}


class QuestionFile(BaseModel):
    """questions.yml as a whole: `version`, questions and conversations (at least one), nothing else
    (rag_ci.core.questionset.questions.parse_question_set refuses other top-level fields)."""

    model_config = ConfigDict(
        extra="forbid",
        title="rag-ci question set (questions.yml)",
        # At least one question or one conversation, as the validator says.
        json_schema_extra={
            "anyOf": [
                {"required": ["questions"], "properties": {"questions": {"minItems": 1}}},
                {"required": ["conversations"], "properties": {"conversations": {"minItems": 1}}},
            ]
        },
    )

    version: QuestionSetVersion = Field(
        description="Bump it when references change (a positive integer or a non-empty string)."
    )
    questions: list[Question] = Field(
        default_factory=list, description="The questions (at least one question or conversation)."
    )
    conversations: list[Conversation] = Field(
        default_factory=list,
        description="Conversations gated turn by turn, each turn `ID#n` (docs/conversations.md).",
    )


def _one_or_many(schema: dict[str, Any]) -> None:
    for model, fields in _ONE_OR_MANY.items():
        properties = schema.get("$defs", {}).get(model, {}).get("properties", {})
        for name in fields:
            if name in properties:
                many = {k: v for k, v in properties[name].items() if k not in ("default", "title")}
                properties[name] = {
                    "title": properties[name].get("title", name),
                    "anyOf": [{"type": "string"}, many],
                    **({"default": properties[name]["default"]} if "default" in properties[name] else {}),
                }


def json_schema(which: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `which`: "config" (rag-ci.yml) or "questions" (questions.yml)."""
    if which == "config":
        schema = Config.model_json_schema(mode="validation")
        schema["title"] = "rag-ci configuration (rag-ci.yml)"
    elif which == "questions":
        schema = QuestionFile.model_json_schema(mode="validation")
        _one_or_many(schema)
    else:
        raise ValueError(f"no schema named {which!r}; one of: {', '.join(FILES)}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_BASE_URL + FILES[which],
        **schema,
    }


def schema_text(which: str) -> str:
    """The schema as committed and printed: 2-space JSON, keys in the models' order, a final newline."""
    return json.dumps(json_schema(which), indent=2, ensure_ascii=False) + "\n"
