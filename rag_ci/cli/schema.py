"""`rag-ci schema [config|questions]`: the JSON Schema of rag-ci.yml or questions.yml, for editors."""

from __future__ import annotations

import click

from rag_ci.cli.echo import echo_json


@click.command("schema")
@click.argument("which", type=click.Choice(["config", "questions"]), default="config")
def schema(which: str) -> None:
    """Print the JSON Schema of rag-ci.yml (`config`, the default) or questions.yml (`questions`).

    Generated from the models `rag-ci validate` uses; the same files ship in the package
    (rag_ci/schemas/). Point an editor at one with a first line like
    `# yaml-language-server: $schema=https://raw.githubusercontent.com/rag-ci/rag-ci/main/rag_ci/schemas/rag-ci.schema.json`
    (docs/questions.md, "Editor support")."""
    from rag_ci.core.questionset.schemas import schema_text

    echo_json(schema_text(which).rstrip("\n"))
