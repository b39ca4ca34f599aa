"""Reading a Dockerfile for what only BuildKit builds and for the images its stages start
FROM (rag_ci/targets/docker_build.py, rag_ci/targets/docker_image.py): pure text, no engine."""

from __future__ import annotations

from pathlib import Path

from rag_ci.targets.docker_build import buildkit_only, classic_failure_hint, instructions, syntax_directive
from rag_ci.targets.docker_image import BuildSpec, base_images

PRIVATEGPT_LIKE = """\
# syntax=docker/dockerfile:1
FROM python:3.11.6-slim-bookworm as base
RUN pip install pipx && pipx install poetry
FROM base as dependencies
WORKDIR /home/worker/app
COPY pyproject.toml poetry.lock ./
RUN --mount=type=cache,target=/root/.cache \\
    poetry install --extras "ui llms-openai"
FROM base as app
RUN adduser --system worker
COPY --chown=worker --from=dependencies /home/worker/app/.venv/ .venv
COPY --chown=worker private_gpt/ private_gpt
ENTRYPOINT python -m private_gpt
"""


def test_the_buildkit_only_syntax_is_found_with_its_line_and_plain_instructions_are_not():
    assert buildkit_only(PRIVATEGPT_LIKE) == ["line 7: RUN --mount"]
    assert (
        buildkit_only("FROM base\nRUN pip install --network-timeout 5 x\nCOPY --chown=app:app . /app\n") == []
    )


def test_heredoc_bodies_and_continuations_are_read_as_the_parser_does():
    text = "FROM base\nRUN <<EOF\nCOPY --link not-an-instruction\nEOF\nRUN a \\\n  # a comment inside\n  --mount=x b\n"
    assert [(i.line, i.keyword) for i in instructions(text)] == [(1, "FROM"), (2, "RUN"), (5, "RUN")]
    # not the body's COPY --link
    assert buildkit_only(text) == [
        "line 2: a heredoc (RUN <<...)",
        "line 5: RUN --mount",
    ]
    assert buildkit_only("FROM base\nRUN a \\\n  --mount=type=cache,target=/c b\n") == ["line 2: RUN --mount"]


def test_the_syntax_directive_counts_only_at_the_top():
    assert syntax_directive(PRIVATEGPT_LIKE) == "docker/dockerfile:1"
    assert syntax_directive("FROM base\n# syntax=docker/dockerfile:1\n") is None
    assert "declares a BuildKit frontend (`# syntax=docker/dockerfile:1`)" in classic_failure_hint(
        "exit 1", PRIVATEGPT_LIKE
    )
    assert classic_failure_hint("exit 1", "FROM base\n") == ""


def _spec(tmp_path: Path, text: str, build_args=None) -> BuildSpec:
    (tmp_path / "Dockerfile").write_text(text)
    return BuildSpec(tmp_path, tmp_path / "Dockerfile", build_args or {}, None)


def test_base_images_are_the_stages_from_images_after_arg_expansion(tmp_path):
    # base, app: stages
    assert base_images(_spec(tmp_path, PRIVATEGPT_LIKE)) == ["python:3.11.6-slim-bookworm"]
    text = "ARG BASE=python:3.12-slim\nARG TAG\nFROM --platform=$BUILDPLATFORM ${BASE} AS build\nFROM scratch\nFROM build\n"
    assert base_images(_spec(tmp_path, text)) == ["python:3.12-slim"]
    assert base_images(_spec(tmp_path, text, {"BASE": "rag-ci-base:bookworm"})) == ["rag-ci-base:bookworm"]
    assert base_images(_spec(tmp_path, "FROM app-image\nRUN true\n")) == ["app-image"]
