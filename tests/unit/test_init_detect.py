"""`rag-ci init` guesses the target from the repository: the usual web servers give an http
target with their port, a start command when the app is found, and a health path to fill."""

import json
import os
import shutil

from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.cli.init_detect import detect_target
from rag_ci.core.config import parse_config


def _project(tmp_path, files: dict[str, str]):
    (tmp_path / "docs" / "manual").mkdir(parents=True)
    (tmp_path / "docs" / "manual" / "a.md").write_text("# Manual\n\nThe delay is 10 ms.\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_fastapi_app_imported_from_fastapi_in_a_sub_folder_gives_an_http_target_that_validate_accepts(
    tmp_path, monkeypatch
):
    """Before: `python`, the check saw only `*.py` at depth 1 and the word FastAPI."""
    _project(
        tmp_path,
        {
            "service/api/routes.py": "from fastapi import APIRouter\nrouter = APIRouter()\n",
            "service/api/server.py": "from fastapi import APIRouter as R\nfrom fastapi import FastAPI\n"
            "api = FastAPI()\n\n@api.post('/ask')\ndef ask(body: dict):\n    return {}\n\n"
            "uvicorn.run(api, host='0.0.0.0', port=8010)\n",
        },
    )
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])
    assert done.exit_code == 0 and "target http" in done.output, done.output
    text = (tmp_path / "rag-ci.yml").read_text()
    assert "FastAPI in service/api/server.py; POST /ask in service/api/server.py" in text
    target = parse_config(text, "rag-ci.yml").target
    # no health route in the app: none written (a guessed /docs or /health may not exist: issue 55)
    assert (target.kind, target.url, target.health) == ("http", "http://127.0.0.1:8010/ask", None)
    assert target.start == ["uvicorn", "service.api.server:api", "--port", "8010"]
    (tmp_path / "questions.yml").write_text(
        "version: 1\nquestions:\n  - {id: Q1, question: What is the delay?, doc_id: manual}\n"
    )
    # validate checks the start command's program is there (issue 55): the app's environment has uvicorn
    missing = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert "no program uvicorn on the target's PATH" in missing.output or shutil.which("uvicorn")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uvicorn").write_text("#!/bin/sh\n")
    (bin_dir / "uvicorn").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    checked = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert checked.exit_code == 0 and "target http" in checked.output, checked.output


def test_a_source_file_of_any_case_and_a_requirements_file_are_read(tmp_path):
    _project(tmp_path, {"App.PY": "from fastapi import FastAPI\n"})
    assert detect_target(tmp_path).kind == "http"
    other = tmp_path / "other"
    _project(other, {"requirements-prod.txt": "gunicorn==22.0\nFlask>=3.0\n"})
    found = detect_target(other)
    assert (found.kind, found.framework, found.port) == ("http", "Flask in requirements-prod.txt", 5000)


def test_fastapi_flask_and_django_apps_get_their_start_commands(tmp_path):
    fast = detect_target(
        _project(tmp_path / "f", {"app/main.py": "from fastapi import FastAPI\napp = FastAPI()\n"})
    )
    assert fast.start == ["uvicorn", "app.main:app", "--port", "8000"]
    flask = detect_target(
        _project(tmp_path / "k", {"web.py": "from flask import Flask\nserver = Flask(__name__)\n"})
    )
    assert (flask.port, flask.start) == (5000, ["flask", "--app", "web:server", "run", "--port", "5000"])
    django = detect_target(
        _project(tmp_path / "d", {"manage.py": "import django\n", "site/settings.py": "DEBUG = True\n"})
    )
    assert (django.kind, django.start) == ("http", ["python", "manage.py", "runserver", "8000"])


def test_an_express_app_gets_its_listen_port_and_npm_start(tmp_path):
    found = detect_target(
        _project(
            tmp_path,
            {
                "package.json": json.dumps(
                    {
                        "main": "server.js",
                        "scripts": {"start": "node server.js"},
                        "dependencies": {"express": "^4.19.0"},
                    }
                ),
                "server.js": "const app = require('express')();\napp.listen(4000);\n",
            },
        )
    )
    assert (found.kind, found.port, found.start, found.framework) == (
        "http",
        4000,
        ["npm", "start"],
        "Express in package.json",
    )


def test_a_dockerfile_of_any_case_gives_docker_with_its_exposed_or_command_port(tmp_path):
    _project(tmp_path, {"dockerfile": 'FROM python:3.12-slim\nEXPOSE 8080\nCMD ["python", "serve.py"]\n'})
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])
    assert done.exit_code == 0, done.output
    target = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml").target
    assert (target.kind, target.port, target.dockerfile) == ("docker", 8080, "dockerfile")
    cmd = detect_target(
        _project(tmp_path / "c", {"Dockerfile": 'FROM x\nCMD ["uvicorn", "app:app", "--port", "9000"]\n'})
    )
    assert (cmd.kind, cmd.port) == ("docker", 9000)


def test_a_plain_python_project_stays_python(tmp_path):
    assert (
        detect_target(_project(tmp_path, {"rag.py": "def answer(request):\n    return {}\n"})).kind
        == "python"
    )


def test_a_web_app_gets_the_health_route_it_declares_and_the_build_step_of_its_requirements(tmp_path):
    """Issue 55: a FastAPI app got `health: /docs` and no build step."""
    _project(
        tmp_path,
        {
            "requirements.txt": "fastapi==0.115\nuvicorn==0.30\n",
            "main.py": "from fastapi import FastAPI\napp = FastAPI(docs_url=None)\n\n"
            '@app.get("/healthz")\ndef healthz():\n    return {}\n\n'
            '@app.post("/query")\ndef query(body: dict):\n    return {}\n',
        },
    )
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])
    assert done.exit_code == 0, done.output
    target = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml").target
    assert target.health == "/healthz" and target.build == ["pip install -r requirements.txt"]
    assert target.start == ["uvicorn", "main:app", "--port", "8000"]
    (tmp_path / "questions.yml").write_text(
        "version: 1\nquestions:\n  - {id: Q1, question: What is the delay?, doc_id: manual}\n"
    )
    # uvicorn comes with the build step: validate says so if it is not there yet, and accepts
    checked = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert checked.exit_code == 0, checked.output
    assert "no program uvicorn" not in checked.output or "unless a build step makes it" in checked.output


def test_a_lock_file_decides_the_build_step(tmp_path):
    _project(
        tmp_path,
        {
            "uv.lock": "",
            "requirements.txt": "flask\n",
            "app.py": "from flask import Flask\napp = Flask(__name__)\n",
        },
    )
    CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])
    target = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml").target
    assert target.build == ["uv sync --frozen"] and target.health is None
