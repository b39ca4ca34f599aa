"""The docker target against a real Docker engine: the example RAG's Dockerfile is
built with the SDK, run, and replayed through rag-ci; the results must equal those
of the `command` target running the same RAG.

.ci/docker-engine.sh starts the engine and makes the offline base image; it writes
a status file this test reads. The test is skipped only when no engine can be
reached, and then says why.

One engine serves every checkout on the machine, and rag-ci finds its image by
labels derived from the context and build config alone: every checkout of the
example has the same labels. A session that removed "its" image by those labels
to force a cold build could remove the image another session had just built,
whose warm look-up then found nothing. So each session builds with a build
argument of its own (its labels and tag are its own) and removes only its images.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import shutil
import uuid
from pathlib import Path

import pytest

from builders import EXAMPLES, docker_engine_status, docker_socket_problem
from rag_ci.errors import TargetError
from rag_ci.files.project import load_project
from rag_ci.run.engine import RunOptions, run_project
from rag_ci.targets.docker import CONTAINER_PREFIX, RUN_LABEL, DockerTarget
from rag_ci.targets.docker_image import build_spec, ensure_image, image_labels

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(240)]

SECRET = "e2e-secret-5f3a9c1d"


@pytest.fixture(scope="module")
def engine():
    """(client, base image) or a skip that says why there is no engine."""
    status = docker_engine_status()
    try:
        import docker
    except ImportError:
        pytest.skip("the Docker SDK is not installed: pip install 'rag-ci-gate[docker]'")
    if (problem := docker_socket_problem()) is not None:
        pytest.skip(
            f"no Docker engine reachable: {status.get('reason') or problem}; run .ci/docker-engine.sh (as root) to start one"
        )
    client = None
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        if client is not None:
            client.close()
        why = status.get("reason") or f"{exc}; run .ci/docker-engine.sh (as root) to start one"
        pytest.skip(f"no Docker engine reachable: {why}")
    # The status file names the local base image; without it, the Dockerfile's default (needs a registry).
    base_image = (
        status.get("base_image", "python:3.12-slim")
        if status.get("status") == "ready"
        else "python:3.12-slim"
    )
    yield client, base_image
    client.close()


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docker-example") / "examples"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".index", "out", "__pycache__"))
    return folder


SESSION_ARG = "RAG_CI_E2E_SESSION"  # not used by the Dockerfile: it only makes this session's labels its own


@pytest.fixture(scope="module")
def session(engine, example):
    """This session's build argument; at the end, the images built with it are removed."""
    client, base_image = engine
    session_id = uuid.uuid4().hex[:12]
    yield session_id
    remove_session_images(client, docker_project(example, base_image, session_id))


def docker_project(example: Path, base_image: str, session_id: str):
    project = load_project(example / "rag-ci.docker.yml")
    build_args = {"BASE_IMAGE": base_image, SESSION_ARG: session_id}
    target = project.config.target.model_copy(update={"build_args": build_args})
    return dataclasses.replace(project, config=project.config.model_copy(update={"target": target}))


def example_spec(project):
    t = project.config.target
    return build_spec(project.root, t.dockerfile, t.context, t.build_args, t.target)


def session_labels(client, project) -> list[str]:
    return [f"{key}={value}" for key, value in image_labels(client, example_spec(project)).items()]


def remove_session_images(client, project) -> None:
    for image in client.images.list(filters={"label": session_labels(client, project)}):
        client.images.remove(image.id, force=True)


def our_containers(client, run_id: str):
    return client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run_id}"})


def comparable(results_file: Path) -> list[tuple]:
    data = json.loads(results_file.read_text())
    return [
        (q["id"], q["answer"], q["contexts"], q["verdict"], q["leaks"], q["error"]) for q in data["questions"]
    ]


def test_the_example_built_and_run_in_docker_answers_like_the_command_target(
    engine, example, session, tmp_path, monkeypatch, capsys
):
    client, base_image = engine
    monkeypatch.delenv("EXAMPLE_RAG_REGRESSION", raising=False)
    project = docker_project(example, base_image, session)
    assert client.images.list(filters={"label": session_labels(client, project)}) == []  # so the run builds

    target = DockerTarget(project.config.target, project.root, client=client)
    result = asyncio.run(
        run_project(project, RunOptions(output=tmp_path / "docker.json", progress=False), target=target)
    )
    # Another session on this engine (another checkout of the example) cleaning up leaves this image alone.
    remove_session_images(client, docker_project(example, base_image, "another-session"))
    # Warm: the same context and config find the labelled image (no second container: vfs makes those slow).
    warm = ensure_image(client, example_spec(project), log=io.StringIO())
    command = asyncio.run(
        run_project(
            load_project(example / "rag-ci.yml"), RunOptions(output=tmp_path / "command.json", progress=False)
        )
    )

    assert len(result.questions) == len(command.questions) >= 30
    assert comparable(tmp_path / "docker.json") == comparable(tmp_path / "command.json")
    assert all(q.verdict == "pass" for q in result.questions)
    assert target.timings.image_reused is False and warm.reused is True
    assert our_containers(client, target.run_id) == []
    with capsys.disabled():
        print(
            f"\n[docker e2e] base {base_image}: cold build {target.timings.image_s:.1f}s, "
            f"warm (label reuse) {warm.seconds:.2f}s, start-to-healthy {target.timings.start_to_healthy_s:.1f}s"
        )


def test_a_killed_container_is_restarted_once_its_logs_kept_and_it_is_removed(engine, example, session):
    client, base_image = engine
    project = docker_project(example, base_image, session)
    config = project.config.target.model_copy(update={"env": {"API_TOKEN": "${RAG_CI_E2E_TOKEN}"}})
    target = DockerTarget(config, project.root, client=client, environ={"RAG_CI_E2E_TOKEN": SECRET})
    request = {
        "id": "DU2-TORQUE",
        "question": "What is the peak torque of the drive unit?",
        "corpora": ["du2"],
    }

    async def scenario():
        await target.start()
        try:
            container = client.containers.get(target.name)
            assert container.exec_run("printenv API_TOKEN").output.decode().strip() == SECRET
            first = await target.query(request)
            container.kill()
            container.wait(timeout=30)
            with pytest.raises(TargetError) as died:
                await target.query(request)
            after = await target.query(request)  # waits for the one restart
            return first, str(died.value), after, target.diagnostics()
        finally:
            await target.stop()

    first, died, after, diagnostics = asyncio.run(scenario())
    assert "60 Nm" in first["answer"] and after == first
    assert "restarting it once" in died
    assert "mid-run; restarted once" in diagnostics and "POST /query" in diagnostics
    assert SECRET not in died + diagnostics
    assert our_containers(client, target.run_id) == []
    assert not [
        c
        for c in client.containers.list(all=True)
        if c.name == target.name and c.name.startswith(CONTAINER_PREFIX)
    ]
