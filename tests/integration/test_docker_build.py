"""Docker targets for today's Dockerfiles: BuildKit through the docker CLI's
buildx when it is there, the SDK's classic builder otherwise, a clear refusal of what only
BuildKit builds, `target.command`, reuse keyed on the base image, `${NAME}` in build_args,
and a quiet build log.

Outer-edge fakes: the Docker engine behind the SDK (tests/fakes/fake_docker_engine.py) and
the `docker` CLI on PATH (tests/fakes/fake_docker_cli.py: no buildx, or a scripted buildx
that records its argv). The classic builder against a real engine is in
tests/e2e/test_docker_e2e.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import write
from fakes import fake_docker_cli
from fakes.fake_docker_engine import FakeDockerClient, FakeImage
from rag_ci.cli import cli
from rag_ci.core.config import DockerTargetConfig
from rag_ci.errors import RagCiError
from rag_ci.targets.docker import DockerTarget
from rag_ci.targets.docker_image import CONFIG_HASH_LABEL, SHA_LABEL
from rag_ci.targets.docker_placement import RunnerHost

OUTSIDE = RunnerHost(in_container=False, hostname="laptop")
REQUEST = {"id": "Q1", "question": "What is the delay?", "corpora": ["a"]}


@pytest.fixture
def buildx(tmp_path, monkeypatch):
    """The fake docker CLI first on PATH; returns a switch: buildx("present" | "absent")."""
    folder = fake_docker_cli.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "buildx.jsonl"
    monkeypatch.setenv("FAKE_BUILDX_LOG", str(log))

    def use(state: str) -> Path:
        monkeypatch.setenv("FAKE_BUILDX", state)
        return log

    use("absent")
    return use


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    write(root / "Dockerfile", "FROM base\nCOPY . /app\n")
    write(root / "app.py", "print('rag')\n")
    return root


def target(root: Path, client: FakeDockerClient, *, environ=None, verbose=False, **config) -> DockerTarget:
    settings = {"kind": "docker", "timeout_s": 5, "startup_timeout_s": 5, **config}
    return DockerTarget(
        DockerTargetConfig(**settings),
        root,
        client=client,
        host=OUTSIDE,
        environ=environ or {},
        log=io.StringIO(),
        verbose=verbose,
    )


def start_query_stop(t: DockerTarget):
    async def go():
        await t.start()
        try:
            return await t.query(REQUEST)
        finally:
            await t.stop()

    return asyncio.run(go())


# ---- the builder ------------------------------------------------------------------


def test_with_buildx_the_image_is_built_by_buildkit_with_the_labels_args_and_stage(project, buildx):
    argv_log = buildx("present")
    client = FakeDockerClient()
    t = target(project, client, build_args={"BASE_IMAGE": "python:3.12-slim"}, target="runtime")
    assert start_query_stop(t)["answer"] == "10 ms"
    (argv,) = [json.loads(line) for line in argv_log.read_text().splitlines()]
    assert argv[:3] == ["buildx", "build", "--load"] and argv[-1] == str(project)
    assert argv[argv.index("-f") + 1] == str(project / "Dockerfile")
    assert argv[argv.index("--build-arg") + 1] == "BASE_IMAGE=python:3.12-slim"
    assert argv[argv.index("--target") + 1] == "runtime"
    labels = [argv[i + 1].split("=")[0] for i, a in enumerate(argv) if a == "--label"]
    assert sorted(labels) == sorted([SHA_LABEL, CONFIG_HASH_LABEL])
    assert client.api.build_calls == []  # not the classic builder
    assert client.containers.run_calls[0]["image"] == "sha256:" + "f" * 64  # the id buildx wrote to --iidfile
    log = t.log.getvalue()
    assert "with BuildKit (docker buildx)" in log
    assert "#1 [internal]" not in log  # quiet: BuildKit's progress stays out of the log


def test_verbose_shows_the_build_output(project, buildx):
    buildx("present")
    t = target(project, FakeDockerClient(), verbose=True)
    start_query_stop(t)
    assert "[rag-ci] docker build: #1 [internal] load build definition from Dockerfile" in t.log.getvalue()


def test_a_failing_buildkit_build_always_shows_the_tail_of_its_log(project, buildx, monkeypatch):
    buildx("present")
    monkeypatch.setenv("FAKE_BUILDX_FAIL", "1")
    client = FakeDockerClient()
    t = target(project, client)
    with pytest.raises(RagCiError) as caught:
        asyncio.run(t.start())
    message = str(caught.value)
    assert "docker build failed: docker buildx build exited with code 1" in message
    assert '#4 ERROR: process "/bin/sh -c pip install" did not complete successfully' in message
    assert client.containers.run_calls == []


def test_without_buildx_the_classic_builder_builds_and_the_log_says_why(project, buildx):
    client = FakeDockerClient()
    t = target(project, client)
    start_query_stop(t)
    assert len(client.api.build_calls) == 1
    assert (
        "with the Docker SDK's classic builder (`docker buildx version` failed: docker: 'buildx' is not a docker command."
        in t.log.getvalue()
    )


@pytest.mark.parametrize(
    "dockerfile, needs",
    [
        (
            "FROM base\nRUN --mount=type=cache,target=/root/.cache pip install -r requirements.txt\n",
            "line 2: RUN --mount",
        ),
        ("FROM base\nCOPY --chmod=755 app.py /app/\n", "line 2: COPY --chmod"),
        ("FROM base\nCOPY --link app.py /app/\n", "line 2: COPY --link"),
        ("FROM base\nRUN <<EOF\nset -e\npip install .\nEOF\nCOPY . /app\n", "line 2: a heredoc (RUN <<...)"),
        (
            "# syntax=docker/dockerfile:1\nFROM base\nRUN \\\n  --mount=type=secret,id=key \\\n  true\n",
            "line 3: RUN --mount",
        ),
    ],
)
def test_without_buildx_a_dockerfile_that_needs_buildkit_is_refused_with_why_not_a_parse_error(
    project, buildx, dockerfile, needs
):
    (project / "Dockerfile").write_text(dockerfile)
    client = FakeDockerClient()
    with pytest.raises(RagCiError) as caught:
        asyncio.run(target(project, client).start())
    message = str(caught.value)
    assert f"Dockerfile needs BuildKit ({needs}" in message
    assert "no BuildKit builder is available here (`docker buildx version` failed" in message
    assert "install the docker CLI's buildx plugin" in message
    assert client.api.build_calls == []  # refused before the classic builder's parse error


def test_the_classic_builders_chown_failure_is_explained_as_buildkits_to_build(project, buildx):
    (project / "Dockerfile").write_text("FROM base\nRUN useradd -g users app\nCOPY --chown=app . /app\n")
    client = FakeDockerClient()
    # What the classic builder really says (checked against Docker 20.10): it reads --chown=app as app:app.
    client.build_output = [
        {"stream": "Step 3/3 : COPY --chown=app . /app\n"},
        {
            "error": (
                "unable to convert uid/gid chown string to host mapping: can't find gid for group app: no such group: app"
            )
        },
    ]
    with pytest.raises(RagCiError) as caught:
        asyncio.run(target(project, client).start())
    assert "The classic builder reads `--chown=USER` as `USER:USER`" in str(caught.value)


def test_builder_buildx_without_buildx_says_so_and_builder_classic_skips_the_check(project, buildx):
    with pytest.raises(RagCiError, match=r"target.builder: buildx, but `docker buildx version` failed"):
        asyncio.run(target(project, FakeDockerClient(), builder="buildx").start())
    (project / "Dockerfile").write_text("FROM base\nRUN --mount=type=cache,target=/c true\n")
    client = FakeDockerClient()
    # told to: the classic builder gets it as it is
    start_query_stop(target(project, client, builder="classic"))
    assert len(client.api.build_calls) == 1


# ---- the image's command, its reuse, its build args -----------------------------------


def test_target_command_replaces_the_images_entrypoint_and_cmd(project, buildx):
    client = FakeDockerClient()
    start_query_stop(target(project, client, command=["python", "-m", "myrag.serve", "--port", "8000"]))
    assert client.containers.run_calls[0]["entrypoint"] == ["python", "-m", "myrag.serve", "--port", "8000"]
    client = FakeDockerClient()
    start_query_stop(target(project, client))
    assert "entrypoint" not in client.containers.run_calls[0]  # the image's own


def test_a_wrapper_image_is_rebuilt_when_its_base_image_changes_behind_the_same_name(project, buildx):
    (project / "Dockerfile").write_text(
        "ARG APP=app-image:latest\nFROM ${APP} AS app\nFROM app\nCOPY . /extra\n"
    )
    client = FakeDockerClient()
    client.images.named["app-image:latest"] = FakeImage("sha256:" + "1" * 64, {})
    for _ in range(2):
        start_query_stop(target(project, client))
    assert len(client.api.build_calls) == 1  # same base: reused

    # `docker build -t app-image .` again
    client.images.named["app-image:latest"] = FakeImage("sha256:" + "2" * 64, {})
    start_query_stop(target(project, client))
    assert len(client.api.build_calls) == 2
    assert client.api.build_calls[0]["labels"][SHA_LABEL] == client.api.build_calls[1]["labels"][SHA_LABEL]

    client.images.named["app-image:v2"] = FakeImage("sha256:" + "3" * 64, {})
    # the ARG picks another base
    start_query_stop(target(project, client, build_args={"APP": "app-image:v2"}))
    assert len(client.api.build_calls) == 3


def test_build_args_expand_names_from_the_environment_and_a_missing_one_stops_before_any_build(
    project, buildx
):
    client = FakeDockerClient()
    start_query_stop(
        target(project, client, build_args={"BASE_IMAGE": "${BASE}:3.12"}, environ={"BASE": "python"})
    )
    assert client.api.build_calls[0]["buildargs"] == {"BASE_IMAGE": "python:3.12"}
    with pytest.raises(
        RagCiError, match=r"target.build_args.BASE_IMAGE refers to \$\{BASE\}, which is not set"
    ):
        target(project, client, build_args={"BASE_IMAGE": "${BASE}:3.12"})


def test_validate_warns_about_a_build_arg_naming_an_unset_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_CI_TEST_UNSET_BASE", raising=False)
    write(tmp_path / "questions.yml", "version: 1\nquestions:\n  - {id: Q1, question: q?, doc_id: a}\n")
    # validate refuses a docker target without its Dockerfile (issue 55): this one has it
    write(tmp_path / "Dockerfile", "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    config = write(
        tmp_path / "rag-ci.yml",
        "questions: questions.yml\ncorpora: {a: {}}\ntarget:\n  kind: docker\n"
        '  build_args: {BASE_IMAGE: "${RAG_CI_TEST_UNSET_BASE}"}\n',
    )
    result = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 0
    assert (
        "warning: target.build_args.BASE_IMAGE refers to ${RAG_CI_TEST_UNSET_BASE}, which is not set here"
        in result.output
    )
