"""The documentation site: built --strict, its generated pages current, every setting explained.

The configuration and CLI references and the shipped JSON Schemas are written by
scripts/docs_gen.py from the code; the README stays a short front door that still holds the
two set-up commands, the second being exactly what CI runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from builders import REPO
from rag_ci.core.config import Config


def _docs_gen() -> Any:
    spec = importlib.util.spec_from_file_location("docs_gen", REPO / "scripts" / "docs_gen.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fields(model: type[BaseModel], docs_gen: Any) -> list[tuple[str, str | None]]:
    """(Model.field, description) of every field reachable from `model`."""
    found = []
    for name, field in model.model_fields.items():
        found.append((f"{model.__name__}.{name}", field.description))
        for nested in docs_gen._models_in(field.annotation):
            found += _fields(nested, docs_gen)
    return found


def test_the_generated_pages_and_schemas_are_current():
    assert _docs_gen().stale_files() == [], "run: python scripts/docs_gen.py"


def test_every_setting_has_a_description_and_the_reference_shows_it():
    docs_gen = _docs_gen()
    fields = _fields(Config, docs_gen)
    assert len(fields) > 80
    assert docs_gen.undescribed_fields() == []
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, description in fields:
        assert docs_gen._cell(description) in page, name


def test_a_field_without_a_description_is_named():
    docs_gen = _docs_gen()

    class Bare(BaseModel):
        described: int = 1
        hidden: int = 2

    original = Config.model_fields["baseline"].annotation
    try:
        Config.model_fields["baseline"].annotation = Bare
        missing = docs_gen.undescribed_fields()
    finally:
        Config.model_fields["baseline"].annotation = original
    assert "Bare.hidden (baseline.hidden)" in missing and "Bare.described (baseline.described)" in missing


def _properties(schema: Any, path: str = ""):
    if isinstance(schema, dict):
        for name, value in (schema.get("properties") or {}).items():
            yield f"{path}.{name}".lstrip("."), value
        for key, value in schema.items():
            yield from _properties(value, f"{path}.{key}" if key not in ("properties", "$defs") else path)
    elif isinstance(schema, list):
        for item in schema:
            yield from _properties(item, path)


def test_every_key_of_the_shipped_config_schema_explains_itself_to_an_editor():
    schema = json.loads((REPO / "rag_ci" / "schemas" / "rag-ci.schema.json").read_text(encoding="utf-8"))
    undescribed = sorted({name for name, value in _properties(schema) if not value.get("description")})
    assert undescribed == []


def test_the_cli_reference_lists_every_command():
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("run", "compare", "report", "validate", "questions generate", "history append"):
        assert f"## `rag-ci {command}`" in page, command
    assert "--fail-on" in page and "--samples" in page  # the options the old synopsis had lost


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    assert mkdocs, "mkdocs is a dev dependency: pip install -e '.[dev]'"
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    pages = {p.stem for p in (REPO / "docs").glob("*.md")}
    built = {p.parent.name for p in (tmp_path / "site").glob("*/index.html")}
    assert pages - {"index"} <= built


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "python -m pytest" in line]


def test_the_readme_is_a_front_door_that_keeps_the_two_set_up_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    assert re.search(
        r'^python3 -m venv \.venv && \. \.venv/bin/activate && pip install -e "\.\[dev\]" && rag-ci run ',
        readme,
        re.M,
    )
    [test_command] = [c for c in _commands(readme) if c.startswith(". .venv/bin/activate && ")]
    [ci_command] = _commands((REPO / ".ci" / "run").read_text(encoding="utf-8"))
    assert test_command == ". .venv/bin/activate && " + ci_command
