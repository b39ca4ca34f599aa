"""Docker targets for today's Dockerfiles against a real engine: the classic
builder's BuildKit-shaped failures explained, `target.command` over a shell-form ENTRYPOINT,
a FROM-wrapper rebuilt when its base changes, and the buildx path end to end.

No buildx is installed here, so the buildx path runs a scripted `docker buildx`
(tests/fakes/fake_docker_cli.py, an outer-edge fake) that records its argv and builds through
the real engine. Every image is FROM the local base image (.ci/docker-engine.sh), tagged
with this session's id and removed at the end. Bounded: a few one-layer builds.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from builders import docker_engine_status, docker_socket_problem, write
from fakes import fake_docker_cli
from rag_ci.core.config import DockerTargetConfig
from rag_ci.errors import RagCiError
from rag_ci.targets.docker import RUN_LABEL, DockerTarget
from rag_ci.targets.docker_image import CONFIG_HASH_LABEL, SHA_LABEL, build_spec, ensure_image

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(240)]

FAKES = Path(__file__).resolve().parents[1] / "fakes"
REQUEST = {"id": "Q1", "question": "What is the delay?", "corpora": ["a"]}


@pytest.fixture(scope="module")
def engine():
    status = docker_engine_status()
    if (problem := docker_socket_problem()) is not None:
        pytest.skip(f"no Docker engine reachable: {status.get('reason') or problem}")
    client = None
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        if client is not None:
            client.close()
        pytest.skip(f"no Docker engine reachable: {status.get('reason') or exc}")
    if status.get("status") != "ready":
        client.close()
        pytest.skip("no local base image (run .ci/docker-engine.sh): these builds must not need a registry")
    session = uuid.uuid4().hex[:12]
    yield client, status["base_image"], session
    ours = client.images.list(filters={"label": f"rag-ci-e2e-session={session}"})
    for image in sorted(ours, key=lambda i: i.attrs["Created"], reverse=True):  # children before their bases
        client.images.remove(image.id, force=True)
    client.close()


@pytest.fixture
def no_buildx(tmp_path, monkeypatch):
    """A docker CLI without buildx first on PATH (whatever this machine has)."""
    folder = fake_docker_cli.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BUILDX", "absent")


def _context(tmp_path: Path, dockerfile: str) -> Path:
    root = tmp_path / "app"
    write(root / "Dockerfile", dockerfile)
    shutil.copy(FAKES / "outage_rag.py", root / "server.py")  # a stdlib HTTP RAG (answers by default)
    shutil.copy(FAKES / "http_rag.py", root / "http_rag.py")
    return root


def _spec(root: Path, base: str, session: str, **args):
    return build_spec(root, "Dockerfile", ".", {"BASE": base, "SESSION": session, **args}, None)


def _target(root: Path, client, base: str, session: str, **config) -> DockerTarget:
    settings = {
        "kind": "docker",
        "timeout_s": 10,
        "startup_timeout_s": 60,
        "port": 8000,
        "path": "/query",
        "health": "/health",
        "build_args": {"BASE": base, "SESSION": session},
        **config,
    }
    return DockerTarget(DockerTargetConfig(**settings), root, client=client, log=io.StringIO())


def _ask(target: DockerTarget) -> dict:
    async def go():
        await target.start()
        try:
            return await target.query(REQUEST)
        finally:
            await target.stop()

    return asyncio.run(go())


HEADER = "ARG BASE\nFROM ${BASE}\nARG SESSION\nLABEL rag-ci-e2e-session=${SESSION}\n"


def test_the_classic_builder_refuses_buildkit_syntax_up_front_and_explains_its_chown_failure(
    engine, tmp_path, no_buildx
):
    client, base, session = engine
    root = _context(tmp_path, HEADER + "RUN --mount=type=cache,target=/root/.cache true\n")
    with pytest.raises(
        RagCiError, match=r"needs BuildKit \(line 5: RUN --mount\), and no BuildKit builder is available"
    ):
        ensure_image(client, _spec(root, base, session), log=io.StringIO())

    # `COPY --chown=nobody` (no group): BuildKit uses nobody's primary group; the classic builder
    # looks for a group "nobody", which Debian does not have, and fails.
    (root / "Dockerfile").write_text(HEADER + "COPY --chown=nobody server.py /server.py\n")
    with pytest.raises(RagCiError) as caught:
        ensure_image(client, _spec(root, base, session), log=io.StringIO())
    message = str(caught.value)
    assert "can't find gid for group nobody" in message
    assert (
        "The classic builder reads `--chown=USER` as `USER:USER`" in message and "needs BuildKit" in message
    )


def test_target_command_makes_an_image_with_a_shell_form_entrypoint_serve_rag_cis_endpoint(
    engine, tmp_path, no_buildx
):
    client, base, session = engine
    # Like PrivateGPT's `ENTRYPOINT python -m private_gpt`: a shell-form entrypoint ignores CMD and arguments.
    root = _context(
        tmp_path, HEADER + "COPY server.py http_rag.py /\nENTRYPOINT python3 -c 'import sys; sys.exit(3)'\n"
    )
    with pytest.raises(RagCiError, match="exited during start-up"):
        _ask(_target(root, client, base, session))
    reply = _ask(_target(root, client, base, session, command=["python3", "/server.py", "8000", "0.0.0.0"]))
    assert reply["contexts"][0]["doc_id"] == "a"


def test_a_from_wrapper_is_rebuilt_when_the_image_behind_its_base_name_changes(engine, tmp_path, no_buildx):
    client, base, session = engine
    app = f"rag-ci-e2e-app-{session}:latest"

    def build_app(marker: str) -> None:  # the app's own image, as `docker build -t app .` makes it
        folder = write(
            tmp_path / f"app-{marker}" / "Dockerfile",
            f"FROM {base}\nLABEL rag-ci-e2e-session={session}\nRUN echo {marker} > /marker\n",
        ).parent
        client.images.build(path=str(folder), tag=app, rm=True, forcerm=True)

    build_app("v1")
    root = _context(
        tmp_path,
        "ARG APP\nFROM ${APP}\nARG SESSION\nLABEL rag-ci-e2e-session=${SESSION}\nCOPY server.py http_rag.py /\n",
    )
    spec = build_spec(root, "Dockerfile", ".", {"APP": app, "SESSION": session}, None)
    first = ensure_image(client, spec, log=io.StringIO())
    again = ensure_image(client, spec, log=io.StringIO())
    build_app("v2")
    rebuilt = ensure_image(client, spec, log=io.StringIO())
    assert (first.reused, again.reused, rebuilt.reused) == (False, True, False)
    assert rebuilt.id != first.id


def test_the_buildx_path_builds_on_the_engine_with_the_labels_that_make_the_image_reusable(
    engine, tmp_path, monkeypatch
):
    client, base, session = engine
    folder = fake_docker_cli.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BUILDX", "present")
    monkeypatch.setenv("FAKE_BUILDX_ENGINE", "1")  # the scripted buildx builds through the real engine
    argv_log = tmp_path / "buildx.jsonl"
    monkeypatch.setenv("FAKE_BUILDX_LOG", str(argv_log))
    root = _context(
        tmp_path, HEADER + 'COPY server.py http_rag.py /\nCMD ["python3", "/server.py", "8000", "0.0.0.0"]\n'
    )

    target = _target(root, client, base, session)
    assert _ask(target)["contexts"][0]["doc_id"] == "a"
    assert "with BuildKit (docker buildx)" in target.log.getvalue()
    (argv,) = [json.loads(line) for line in argv_log.read_text().splitlines()]
    image = client.images.get(argv[argv.index("-t") + 1])
    assert {SHA_LABEL, CONFIG_HASH_LABEL} <= set(image.labels)
    assert ensure_image(
        client, _spec(root, base, session), log=io.StringIO()
    ).reused  # found again by its labels
    assert client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={target.run_id}"}) == []
