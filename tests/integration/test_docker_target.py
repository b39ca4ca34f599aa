"""DockerTarget with the Docker SDK client injected: network choice, image reuse,
build failures, clean-up on every path, log attachment and secret redaction.

FakeDockerClient (tests/fakes/fake_docker_engine.py) stands in for `docker.DockerClient`.
A fake container "runs" a real HTTP server on 127.0.0.1 (a thread), so the HttpTarget the
docker target delegates to is exercised for real; killing the container stops that server.
"""

from __future__ import annotations

import asyncio
import io
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from docker.errors import DockerException

from fakes import fake_docker_cli
from fakes.fake_docker_engine import FakeDockerClient
from rag_ci.core.config import DockerTargetConfig
from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.docker import RUN_LABEL, DockerTarget
from rag_ci.targets.docker_env import resolve_env
from rag_ci.targets.docker_image import CONFIG_HASH_LABEL, SHA_LABEL
from rag_ci.targets.docker_placement import RunnerHost, choose_placement

REQUEST = {"id": "Q1", "question": "What is the delay?", "corpora": ["a"]}
OUTSIDE = RunnerHost(in_container=False, hostname="laptop")


# ---- helpers ------------------------------------------------------------------


@pytest.fixture(autouse=True)
def docker_cli(tmp_path_factory, monkeypatch):
    """A fake `docker` CLI first on PATH (tests/fakes/fake_docker_cli.py): without buildx
    unless a test sets FAKE_BUILDX=present, so no test reaches a real CLI."""
    folder = fake_docker_cli.install(tmp_path_factory.mktemp("bin"))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BUILDX", "absent")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Dockerfile").write_text("FROM base\nCOPY . /app\n")
    (tmp_path / "app.py").write_text("print('rag')\n")
    (tmp_path / ".dockerignore").write_text("notes.txt\n")
    return tmp_path


def make_target(
    root: Path, client: FakeDockerClient, host: RunnerHost = OUTSIDE, environ=None, **config
) -> DockerTarget:
    settings = {"kind": "docker", "timeout_s": 5, "startup_timeout_s": 5, **config}
    return DockerTarget(
        DockerTargetConfig(**settings),
        root,
        client=client,
        host=host,
        environ=environ or {},
        log=io.StringIO(),
    )


def run(coro):
    return asyncio.run(coro)


async def started(target: DockerTarget) -> DockerTarget:
    await target.start()
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- network choice -----------------------------------------------------------


def test_outside_a_container_the_port_is_published_on_localhost_only(project):
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client))
        try:
            return await target.query(REQUEST)
        finally:
            await target.stop()

    assert run(go())["answer"] == "10 ms"
    call = client.containers.run_calls[0]
    assert call["ports"] == {"8000/tcp": ("127.0.0.1", None)} and "network" not in call


def test_inside_the_job_container_the_target_joins_the_jobs_network(project):
    port = free_port()
    client = FakeDockerClient(network_port=port)
    client.containers.me = {
        "HostConfig": {"NetworkMode": "github_network_abc"},
        "NetworkSettings": {"Networks": {"bridge": {}, "github_network_abc": {}}},
    }
    host = RunnerHost(in_container=True, hostname="ci-job-1234")

    async def go():
        target = await started(make_target(project, client, host=host, port=port))
        try:
            return target, await target.query(REQUEST)
        finally:
            await target.stop()

    target, reply = run(go())
    call = client.containers.run_calls[0]
    assert call["network"] == "github_network_abc" and "ports" not in call
    assert reply["answer"] == "10 ms" and target._http.url == f"http://127.0.0.1:{port}/query"


def test_a_container_the_engine_does_not_know_or_host_networking_means_publishing():
    client = FakeDockerClient()
    assert choose_placement(client, RunnerHost(True, "some-vm")).network is None  # e.g. a VM with /.dockerenv
    client.containers.me = {
        "HostConfig": {"NetworkMode": "host"},
        "NetworkSettings": {"Networks": {"host": {}}},
    }
    assert choose_placement(client, RunnerHost(True, "ci-job-1234")).network is None
    client.containers.me = {
        "HostConfig": {"NetworkMode": "default"},
        "NetworkSettings": {"Networks": {"bridge": {}}},
    }
    assert choose_placement(client, RunnerHost(True, "ci-job-1234")).network == "bridge"


# ---- image: labels, reuse, build failure ---------------------------------------


def test_an_unchanged_context_reuses_the_labelled_image_and_a_change_rebuilds(project):
    client = FakeDockerClient()

    def start_and_stop():
        async def go():
            target = await started(make_target(project, client, build_args={"BASE_IMAGE": "local"}))
            await target.stop()
            return target.timings

        return run(go())

    first = start_and_stop()
    labels = client.api.build_calls[0]["labels"]
    assert set(labels) == {SHA_LABEL, CONFIG_HASH_LABEL} and client.api.build_calls[0]["buildargs"] == {
        "BASE_IMAGE": "local"
    }
    second = start_and_stop()
    assert (first.image_reused, second.image_reused, len(client.api.build_calls)) == (False, True, 1)

    (project / "notes.txt").write_text("ignored by .dockerignore")
    start_and_stop()
    assert len(client.api.build_calls) == 1  # an ignored file is not part of the context

    (project / "app.py").write_text("print('rag v2')\n")
    start_and_stop()
    assert (
        len(client.api.build_calls) == 2
        and client.api.build_calls[1]["labels"][SHA_LABEL] != labels[SHA_LABEL]
    )


def test_other_build_args_are_another_image(project):
    client = FakeDockerClient()

    async def go(args):
        target = await started(make_target(project, client, build_args=args))
        await target.stop()

    run(go({"BASE_IMAGE": "a"}))
    run(go({"BASE_IMAGE": "b"}))
    assert len(client.api.build_calls) == 2


def test_checkouts_of_one_context_share_their_image_unless_a_build_arg_sets_them_apart(
    project, tmp_path_factory
):
    # The cause of a docker e2e flake: two test sessions on one engine (two checkouts) built
    # images with identical labels, so one session removing "its" image by label to force
    # a cold build removed the other's, whose warm look-up then found nothing. The e2e
    # test now builds with a build argument of its own per session.
    import shutil

    from rag_ci.targets.docker_image import build_spec, ensure_image

    other = tmp_path_factory.mktemp("other-checkout")
    shutil.copytree(project, other, dirs_exist_ok=True)
    client = FakeDockerClient()
    for root in (project, other):
        ensure_image(
            client, build_spec(root, "Dockerfile", ".", {"BASE_IMAGE": "local"}, None), log=io.StringIO()
        )
    assert len(client.images.images) == 1  # the second checkout reused the first one's image

    for root, session in ((project, "s1"), (other, "s2")):
        ensure_image(
            client,
            build_spec(root, "Dockerfile", ".", {"BASE_IMAGE": "local", "RAG_CI_E2E_SESSION": session}, None),
            log=io.StringIO(),
        )
    sessions = [i.labels for i in client.images.images[1:]]
    assert len(sessions) == 2 and sessions[0] != sessions[1]


def test_a_failed_build_says_why_with_the_last_lines_of_the_log_and_runs_nothing(project):
    client = FakeDockerClient()
    client.build_output = [
        {"stream": "Step 1/2 : FROM base\n"},
        {"stream": "Step 2/2 : RUN pip install numpy\n"},
        {"stream": "ERROR: Could not find a version that satisfies the requirement numpy\n"},
        {"error": "The command '/bin/sh -c pip install numpy' returned a non-zero code: 1"},
    ]
    target = make_target(project, client)
    with pytest.raises(RagCiError) as caught:
        run(target.start())
    message = str(caught.value)
    assert "docker build failed" in message and "returned a non-zero code: 1" in message
    assert "Could not find a version that satisfies the requirement numpy" in message
    assert client.containers.run_calls == []
    assert "docker build: Step 2/2 : RUN pip install numpy" in target.log.getvalue()  # progress lines only
    assert " ---> " not in target.log.getvalue()


def test_a_missing_dockerfile_is_a_clear_error(project):
    with pytest.raises(RagCiError, match="target.dockerfile: .*nope.Dockerfile does not exist"):
        run(make_target(project, FakeDockerClient(), dockerfile="nope.Dockerfile").start())


# ---- clean-up on every path ----------------------------------------------------


def test_the_container_is_removed_after_a_successful_run_and_stop_is_idempotent(project):
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client, resources={"cpus": 1.5, "memory": "512m"}))
        await target.query(REQUEST)
        await target.stop()
        await target.stop()
        return target

    target = run(go())
    assert client.containers.by_name == {} and client.removed == [target.name]
    call = client.containers.run_calls[0]
    assert call["nano_cpus"] == 1_500_000_000 and call["mem_limit"] == "512m"
    assert call["name"].startswith("rag-ci-target-") and call["labels"] == {RUN_LABEL: target.run_id}


def test_a_container_that_exits_at_start_up_fails_with_its_logs_and_is_removed(project):
    client = FakeDockerClient(behaviour="exit_at_start")
    target = make_target(project, client)
    with pytest.raises(RagCiError, match=r"exited during start-up \(code 1\)[\s\S]*no module named numpy"):
        run(target.start())
    assert client.containers.by_name == {} and client.removed == [target.name]


def test_a_container_dying_before_it_is_healthy_fails_fast_with_its_logs(project):
    client = FakeDockerClient(behaviour="dies_while_loading")
    target = make_target(project, client, startup_timeout_s=30)
    began = time.monotonic()
    with pytest.raises(RagCiError, match=r"exited during start-up \(code 3\)[\s\S]*loading the index"):
        run(target.start())
    assert time.monotonic() - began < 5 and client.removed == [target.name]


def test_a_container_never_healthy_times_out_and_is_removed(project):
    client = FakeDockerClient(behaviour="never_healthy")
    target = make_target(project, client, startup_timeout_s=0.5)
    with pytest.raises(RagCiError, match="not healthy after"):
        run(target.start())
    assert client.containers.by_name == {} and client.removed == [target.name]


def test_without_a_health_route_the_container_is_ready_once_its_question_path_answers(project):
    # `health: null`, what `rag-ci init` writes when the app's code declares no health route.
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client, health=None))
        try:
            return await target.query(REQUEST)
        finally:
            await target.stop()

    assert run(go())["answer"] == "10 ms"
    loading = FakeDockerClient(behaviour="never_healthy")  # its question path answers 503
    target = make_target(project, loading, health=None, startup_timeout_s=0.5)
    with pytest.raises(RagCiError, match=r"not healthy after 0s at http://[\d.:]+/query \(HTTP 503\)"):
        run(target.start())
    assert loading.containers.by_name == {}


def test_ctrl_c_while_waiting_for_health_removes_the_container(project):
    client = FakeDockerClient(behaviour="never_healthy")
    target = make_target(project, client, startup_timeout_s=30)
    with pytest.raises(asyncio.TimeoutError):  # wait_for cancels start(), as Ctrl-C does
        run(asyncio.wait_for(target.start(), 1.0))
    assert client.containers.by_name == {} and client.removed == [target.name]


def test_cancel_while_the_engine_creates_the_container_still_removes_it(project):
    client = FakeDockerClient(run_delay_s=0.6)  # cancelled at 0.2 s, created at 0.6 s
    target = make_target(project, client)
    with pytest.raises(asyncio.TimeoutError):
        run(asyncio.wait_for(target.start(), 0.2))
    assert client.containers.by_name == {} and client.removed == [target.name]


# ---- death mid-run: restart once, logs attached ----------------------------------


def test_a_container_dying_mid_run_is_restarted_once_and_its_logs_are_attached(project):
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client))
        outcomes = []
        try:
            for question in ["first", "crash", "after restart", "crash", "after second death", "again"]:
                try:
                    outcomes.append(await target.query({**REQUEST, "question": question}))
                except TargetError as exc:
                    outcomes.append(exc)
                await asyncio.sleep(0.2)  # let the fake process die
            return target, outcomes, target.diagnostics()
        finally:
            await target.stop()

    target, outcomes, diagnostics = run(go())
    ok, crash1, after, crash2, dead, dead_again = outcomes
    assert ok["answer"] == after["answer"] == "10 ms"
    assert isinstance(crash1, TargetError) and "restarting it once" in str(crash1)
    assert isinstance(crash2, TargetError) and "after its one restart; not restarting" in str(crash2)
    assert isinstance(dead, TargetError) and isinstance(dead_again, TargetError)
    assert len(client.containers.run_calls) == 1 and client.removed == [target.name]
    assert "exited (code 137) mid-run; restarted once" in diagnostics
    assert "answering Q1" in diagnostics and "killed, exit 137" in diagnostics


def test_concurrent_questions_hit_by_one_death_cause_one_restart(project):
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client))
        try:
            client.containers.by_name[target.name].die(137)
            failed = await asyncio.gather(*(target.query(REQUEST) for _ in range(6)), return_exceptions=True)
            return failed, await target.query(REQUEST), client.containers.by_name[target.name].starts
        finally:
            await target.stop()

    failed, after, starts = run(go())
    assert all(isinstance(f, TargetError) for f in failed)
    assert sum("restarting it once" in str(f) for f in failed) == 1
    assert after["answer"] == "10 ms" and starts == 2


def test_diagnostics_after_stop_keep_the_last_log_lines(project):
    client = FakeDockerClient()

    async def go():
        target = await started(make_target(project, client))
        await target.query(REQUEST)
        await target.stop()
        return target

    target = run(go())
    assert "answering Q1" in target.diagnostics() and target.name in target.diagnostics()


# ---- secrets ----------------------------------------------------------------------


def test_env_secrets_reach_the_container_but_never_logs_errors_or_diagnostics(project):
    secret = "sk-live-0123456789"
    client = FakeDockerClient()

    async def go():
        target = await started(
            make_target(
                project, client, env={"API_KEY": "${MY_KEY}", "MODE": "fast"}, environ={"MY_KEY": secret}
            )
        )
        try:
            with pytest.raises(TargetError) as caught:
                await target.query({**REQUEST, "question": "please echo the key"})
            return target, str(caught.value), target.diagnostics()
        finally:
            await target.stop()

    target, error, diagnostics = run(go())
    assert client.containers.run_calls[0]["environment"] == {"API_KEY": secret, "MODE": "fast"}
    assert "bad key ***" in error and "key=***" in diagnostics
    assert secret not in error + diagnostics + target.log.getvalue()


def test_env_redaction_rules():
    env, secrets = resolve_env(
        {"A": "${X}", "DB_PASSWORD": "hunter22", "LEVEL": "debug", "SHORT": "${Y}"}, {"X": "abcdef", "Y": "1"}
    )
    assert env == {"A": "abcdef", "DB_PASSWORD": "hunter22", "LEVEL": "debug", "SHORT": "1"}
    assert secrets == ["hunter22", "abcdef"]  # literal 'debug' is no secret; '1' is too short to redact
    with pytest.raises(RagCiError, match=r"target.env.A refers to \$\{NOPE\}"):
        resolve_env({"A": "${NOPE}"}, {})


# ---- the SDK itself ------------------------------------------------------------------


def test_without_the_docker_package_the_error_says_what_to_install(project, monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)
    target = DockerTarget(
        DockerTargetConfig(kind="docker"), project, host=OUTSIDE, environ={}, log=io.StringIO()
    )
    with pytest.raises(RagCiError, match=r"pip install 'rag-ci-gate\[docker\]'"):
        run(target.start())


def test_an_unreachable_engine_is_a_clear_error(project, monkeypatch):
    import docker

    def refuse():
        raise DockerException("Error while fetching server API version: Connection refused")

    monkeypatch.setattr(docker, "from_env", refuse)
    target = DockerTarget(
        DockerTargetConfig(kind="docker"), project, host=OUTSIDE, environ={}, log=io.StringIO()
    )
    with pytest.raises(RagCiError, match="cannot reach the Docker engine: .*Connection refused"):
        run(target.start())
