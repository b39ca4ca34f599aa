"""`rag-ci init` writes only what `rag-ci validate` takes, and validate refuses a port outside
1-65535 and an entry that is no importable module path.

Before, `EXPOSE 99999` became `port: 99999`, a FastAPI app in `1app/main.py` became
`start: [uvicorn, 1app.main:app, ...]`, and validate took both (and `entry: 1app.main:answer`).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from builders import write
from rag_ci.cli import cli
from rag_ci.core.config import parse_config

QUESTIONS = "version: 1\nquestions:\n  - {id: A, question: q, doc_id: a}\n"


def project(root, files: dict[str, str]):
    write(root / "docs" / "manual" / "a.md", "# Manual\n\nThe delay is 10 ms.\n")
    for name, text in files.items():
        write(root / name, text)
    return root


def init(root, *args: str, given: str | None = None):
    return CliRunner().invoke(cli, ["init", str(root), "--no-workflows", *args], input=given)


def validate(root):
    return CliRunner().invoke(cli, ["validate", "--config", str(root / "rag-ci.yml")])


def validate_with_a_question(root):
    """`rag-ci validate` on what init wrote, once its empty question set has a question."""
    write(root / "questions.yml", QUESTIONS.replace("doc_id: a", "doc_id: manual"))
    done = validate(root)
    assert done.exit_code == 0, done.output


def test_an_exposed_port_outside_the_range_is_not_written(tmp_path):
    serve = 'from fastapi import FastAPI\napp = FastAPI()\n\n@app.post("/ask")\ndef ask(body: dict):\n    return {}\n'
    project(
        tmp_path,
        {"Dockerfile": 'FROM python:3.12\nEXPOSE 99999\nCMD ["python", "serve.py"]\n', "serve.py": serve},
    )

    done = init(tmp_path, "--yes")

    assert done.exit_code == 0, done.output
    text = (tmp_path / "rag-ci.yml").read_text()
    assert "port: 8000" in text and "99999" not in text.split("target:")[1].split("#")[0], text
    validate_with_a_question(tmp_path)


@pytest.mark.parametrize("folder", ["1app", "my-app"])
def test_an_app_in_a_folder_that_is_no_module_name_gets_no_start_command(tmp_path, folder):
    project(
        tmp_path,
        {
            f"{folder}/main.py": "from fastapi import FastAPI\napp = FastAPI()\n\n@app.post('/ask')\ndef ask(body: dict):\n    return {}\n"
        },
    )

    done = init(tmp_path, "--yes")

    assert done.exit_code == 0, done.output
    target = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml").target
    assert target.kind == "http" and target.start is None, target
    validate_with_a_question(tmp_path)


@pytest.mark.parametrize(
    "kind, typed, says",
    [
        ("docker", "99999\n/query\n", "target.port"),
        ("python", "1app.main:answer\n", "`1app` is no Python name"),
        ("http", "http://127.0.0.1:99999/query\n", "its port must be a number from 1 to 65535"),
    ],
)
def test_init_refuses_to_write_what_was_typed_when_validate_would_refuse_it(tmp_path, kind, typed, says):
    project(tmp_path, {})

    done = init(tmp_path, "--target", kind, given=typed)

    assert done.exit_code == 2, done.output
    assert "not writing rag-ci.yml" in done.output and says in done.output, done.output
    assert not (tmp_path / "rag-ci.yml").exists()


@pytest.mark.parametrize(
    "target, says",
    [
        ("{kind: docker, port: 99999}", "target.port: Input should be less than or equal to 65535"),
        ("{kind: docker, port: 0}", "target.port: Input should be greater than or equal to 1"),
        ("{kind: http, url: 'http://127.0.0.1:99999/query'}", "its port must be a number from 1 to 65535"),
        ("{kind: python, entry: '1app.main:answer'}", "`1app` is no Python name"),
        ("{kind: python, entry: 'app.main:'}", "a name is missing"),
    ],
)
def test_validate_refuses_a_port_outside_the_range_and_an_entry_python_cannot_import(tmp_path, target, says):
    write(tmp_path / "questions.yml", QUESTIONS)
    write(
        tmp_path / "rag-ci.yml",
        f"questions: questions.yml\ncorpora: {{a: {{description: A}}}}\ntarget: {target}\n",
    )

    done = validate(tmp_path)

    assert done.exit_code == 2, done.output
    assert "rag-ci.yml:3: " in done.output and says in done.output, done.output


@pytest.mark.parametrize("entry", ["app:answer", "app.main:Answer.run", "_private.mod:f"])
def test_importable_entries_are_taken(entry):
    config = parse_config(
        f"questions: q.yml\ncorpora: {{a: {{description: A}}}}\ntarget: {{kind: python, entry: '{entry}'}}\n",
        "rag-ci.yml",
    )
    assert config.target.entry == entry
