"""`rag-ci init` beside a Dockerfile writes only what the Dockerfile and the app's code say
(issue 55: on a txtai service it guessed `path: /query` and `health: /health`, which the app did
not have, and `validate` accepted them). Small real app folders (FastAPI-, Flask- and
http.server-shaped code with a Dockerfile) are written to tmp; init only reads them, no Docker
engine is needed. Each test failed on the code before: init wrote `/query` and `/health`."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from rag_ci.cli import cli

QUESTIONS = """\
version: 1
questions:
  - id: Q1
    question: How long does the charger take?
    reference: 6.5 hours.
    doc_id: manual
"""

FASTAPI = """\
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Ask(BaseModel):
    question: str
    corpora: list[str] = []


@app.get("/healthz")
def healthz():
    return {"status": "ok"}


@app.post("/feedback")
def feedback(body: dict):
    return {}


@app.post("/v1/ask")
def ask(body: Ask):
    return {"answer": body.question, "contexts": []}
"""

FLASK = """\
from flask import Flask, jsonify, request

app = Flask(__name__)


@app.route("/ping")
def ping():
    return "pong"


@app.route("/upload", methods=["POST"])
def upload():
    return jsonify(ok=True)


@app.route("/search", methods=["GET", "POST"])
def search():
    query = request.get_json()["question"]
    return jsonify(answer=query, contexts=[])
"""

HTTP_SERVER = """\
import json
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/ready" else 404)
        self.end_headers()

    def do_POST(self):
        if self.path != "/rag":
            self.send_response(404)
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = json.dumps({"answer": body["question"], "contexts": []}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(reply)


HTTPServer(("0.0.0.0", 8081), Handler).serve_forever()
"""


def _app(root: Path, files: dict[str, str]) -> Path:
    (root / "docs" / "manual").mkdir(parents=True)
    (root / "docs" / "manual" / "charging.md").write_text("# Charging\n\nA full charge takes 6.5 hours.\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _init(root: Path, *extra: str) -> dict:
    made = CliRunner().invoke(cli, ["init", str(root), "--yes", "--no-workflows", *extra])
    assert made.exit_code == 0, made.output
    return yaml.safe_load((root / "rag-ci.yml").read_text())["target"]


def _validate(root: Path):
    """`rag-ci validate` once the question set has a question (an empty one is refused first)."""
    (root / "questions.yml").write_text(QUESTIONS)
    (root / "rag-ci.yml").write_text(
        (root / "rag-ci.yml").read_text().replace('"manual documents"', '"The e-bike manual"')
    )
    return CliRunner().invoke(cli, ["validate", "--config", str(root / "rag-ci.yml")])


def test_a_fastapi_app_gets_its_question_and_health_routes_and_the_port_of_its_cmd(tmp_path):
    root = _app(
        tmp_path,
        {
            "app/main.py": FASTAPI,
            "tests/test_app.py": 'def test_it(client):\n    client.post("/query", json={})\n',
            "Dockerfile": 'FROM python:3.12-slim\nCOPY . /srv\nCMD ["uvicorn", "app.main:app", "--port", "8100"]\n',
        },
    )
    target = _init(root)

    # the POST route whose handler takes a question, not /feedback nor the test's /query
    assert target == {
        "kind": "docker",
        "dockerfile": "Dockerfile",
        "port": 8100,
        "path": "/v1/ask",
        "health": "/healthz",
    }
    text = (root / "rag-ci.yml").read_text()
    assert "POST /v1/ask in app/main.py" in text and "port 8100 in its CMD" in text
    checked = _validate(root)
    assert checked.exit_code == 0, checked.output


def test_a_flask_app_gets_its_post_route_and_its_exposed_port(tmp_path):
    root = _app(
        tmp_path,
        {
            "server.py": FLASK,
            "Dockerfile": "FROM python:3.12-slim\nEXPOSE 5001\nCMD flask --app server run -h 0.0.0.0 -p 5001\n",
        },
    )
    target = _init(root)

    assert (target["port"], target["path"], target["health"]) == (5001, "/search", "/ping")
    assert "EXPOSE 5001 in Dockerfile" in (root / "rag-ci.yml").read_text()
    assert _validate(root).exit_code == 0


def test_a_plain_http_server_gets_the_path_its_do_post_answers_and_the_port_it_listens_on(tmp_path):
    root = _app(
        tmp_path,
        {"serve.py": HTTP_SERVER, "Dockerfile": 'FROM python:3.12-slim\nCMD ["python", "serve.py"]\n'},
    )
    target = _init(root)

    assert (target["port"], target["path"], target["health"]) == (8081, "/rag", "/ready")
    assert "port 8081 in serve.py" in (root / "rag-ci.yml").read_text()
    assert _validate(root).exit_code == 0


def test_an_app_whose_code_declares_no_routes_gets_a_placeholder_validate_refuses_at_its_line(tmp_path):
    # The txtai case: the service's routes live in an installed package, not in the build context.
    root = _app(
        tmp_path,
        {
            "config.yml": "embeddings:\n  path: sentence-transformers/all-MiniLM-L6-v2\n",
            "Dockerfile": 'FROM neuml/txtai-cpu\nCOPY config.yml /\nCMD ["uvicorn", "txtai.api:app"]\n',
        },
    )
    made = CliRunner().invoke(cli, ["init", str(root), "--yes", "--no-workflows"])
    assert made.exit_code == 0 and "fill in target.path in rag-ci.yml" in made.output, made.output
    target = yaml.safe_load((root / "rag-ci.yml").read_text())["target"]

    text = (root / "rag-ci.yml").read_text()
    assert target["health"] is None and "no health route found in the app's code" in text
    assert "/query" not in text and "/health\n" not in text and "health: /health" not in text
    assert "set the port your app listens on" in text  # 8000 said to be assumed, not found
    checked = _validate(root)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("  path:"))
    assert checked.exit_code == 2
    assert f"rag-ci.yml:{line}: target.path holds the placeholder `rag-ci init` wrote" in checked.output
    assert "fill in the route your app answers questions on" in checked.output
    # `run` refuses it the same way, before building anything (no Docker engine is needed to see it)
    ran = CliRunner().invoke(
        cli, ["run", "--config", str(root / "rag-ci.yml"), "--output", str(tmp_path / "r.json")]
    )
    assert ran.exit_code == 2 and f"rag-ci.yml:{line}: target.path holds the placeholder" in ran.output, (
        ran.output
    )
    assert not (tmp_path / "r.json").exists()


def test_a_docker_target_without_a_dockerfile_is_refused_by_validate(tmp_path):
    root = _app(tmp_path, {"server.py": FLASK})
    target = _init(root, "--target", "docker")

    assert (target["path"], target["health"]) == ("/search", "/ping")
    assert "not there yet" in (root / "rag-ci.yml").read_text()
    checked = _validate(root)
    assert checked.exit_code == 2
    assert "target.dockerfile Dockerfile: no such file in the build context" in checked.output


def test_without_a_dockerfile_the_http_target_posts_to_the_route_the_code_declares(tmp_path):
    root = _app(tmp_path, {"main.py": FASTAPI})
    target = _init(root)

    assert (target["kind"], target["url"], target["health"]) == (
        "http",
        "http://127.0.0.1:8000/v1/ask",
        "/healthz",
    )
    assert "POST /v1/ask in main.py" in (root / "rag-ci.yml").read_text()


def test_an_http_app_declaring_no_question_route_gets_a_placeholder_validate_and_run_refuse(tmp_path):
    # FastAPI found, but only the feedback route: `/query` would be a guess the app does not answer.
    only_feedback = FASTAPI.split('@app.post("/v1/ask")')[0]
    root = _app(tmp_path, {"main.py": only_feedback})
    made = CliRunner().invoke(cli, ["init", str(root), "--yes", "--no-workflows"])
    assert made.exit_code == 0 and "fill in target.url in rag-ci.yml" in made.output, made.output
    target = yaml.safe_load((root / "rag-ci.yml").read_text())["target"]
    assert target["kind"] == "http" and "/query" not in target["url"]

    text = (root / "rag-ci.yml").read_text()
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("  url:"))
    checked = _validate(root)
    assert checked.exit_code == 2
    assert f"rag-ci.yml:{line}: target.url holds the placeholder `rag-ci init` wrote" in checked.output
    ran = CliRunner().invoke(
        cli, ["run", "--config", str(root / "rag-ci.yml"), "--output", str(tmp_path / "r.json")]
    )
    assert ran.exit_code == 2 and "target.url holds the placeholder" in ran.output, ran.output
