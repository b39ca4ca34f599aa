"""What the target's user can do, with real processes, when rag-ci runs as root.

On GitHub's runners the checkout belongs to `runner:docker` and, inside the action's
container, the runner's uid has no account: the target must not get the checkout's group
(the Docker socket's, root on the host). A "Permission denied" met by the target or a build
step says which user the target runs as and how to change it.
"""

import asyncio
import grp
import json
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

from drive import replay, uid_without_account
from rag_ci.errors import RagCiError
from rag_ci.targets import process_user
from rag_ci.targets.command import CommandTarget

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the target changes user only when rag-ci runs as root"),
]
PYTHON = "/usr/bin/python3"  # executable by any user, unlike a venv under /root

REPORTS_GROUPS = """
import json, os, socket, sys
for line in sys.stdin:
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(sys.argv[1])
        reached = "connected"
    except OSError as exc:
        reached = type(exc).__name__
    status = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "socket": reached}
    print(json.dumps({"answer": json.dumps(status), "contexts": []}), flush=True)
"""


@pytest.fixture
def shared_dir(monkeypatch):
    """A folder every user may enter (pytest's tmp folders are root's only); the target user
    is chosen afresh from the project folder, as in the action."""
    if not os.access(PYTHON, os.X_OK):
        pytest.skip(f"no {PYTHON}")
    base = Path(tempfile.mkdtemp(prefix="rag-ci-target-user-"))
    os.chmod(base, 0o755)
    monkeypatch.setenv(process_user.TARGET_USER_VARIABLE, "")
    process_user._choose_user.cache_clear()
    yield base
    process_user._choose_user.cache_clear()
    shutil.rmtree(base, ignore_errors=True)


def test_the_target_of_a_runner_docker_checkout_gets_neither_the_group_nor_the_socket(shared_dir):
    # Before: the target ran with the checkout's group, and so reached a socket of that group.
    # `adm` where there is no docker group
    docker = next((g.gr_gid for g in grp.getgrall() if g.gr_name == "docker"), 4)
    checkout = shared_dir / "checkout"
    checkout.mkdir()
    (checkout / "rag.py").write_text(REPORTS_GROUPS)
    runner_uid = uid_without_account()
    for path in (checkout, checkout / "rag.py"):
        os.chown(path, runner_uid, docker)
    engine = shared_dir / "engine.sock"  # stands for /var/run/docker.sock: root:docker, 0660
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(engine))
    server.listen(1)
    os.chown(engine, 0, docker)
    os.chmod(engine, 0o660)
    try:
        [reply] = replay(
            CommandTarget([PYTHON, "rag.py", str(engine)], cwd=checkout),
            {"id": "Q1", "question": "q", "corpora": ["a"]},
        )
    finally:
        server.close()
    status = json.loads(reply["answer"])
    assert status["uid"] == runner_uid
    assert status["gid"] != docker and docker not in status["groups"], status
    assert status["socket"] == "PermissionError", status


def test_a_target_command_the_target_user_may_not_run_says_who_it_runs_as_and_how_to_change_it(
    shared_dir, monkeypatch
):
    # Before: "Permission denied: ..." and nothing about the user.
    monkeypatch.setenv(process_user.TARGET_USER_VARIABLE, "nobody")
    private = shared_dir / "private"
    private.mkdir(mode=0o700)
    script = private / "rag"
    script.write_text("#!/bin/sh\nexec cat\n")
    script.chmod(0o700)
    target = CommandTarget([str(script)], cwd=shared_dir)
    with pytest.raises(RagCiError) as caught:
        asyncio.run(target.start())
    message = str(caught.value)
    assert (
        "Permission denied" in message
        and "run as user nobody" in message
        and "RAG_CI_TARGET_USER=root" in message
    )


def test_a_build_step_that_cannot_write_the_checkout_hints_at_the_user(shared_dir, monkeypatch):
    # Inside the image: the checkout is root's, the target user `nobody`. Before: a bare "Permission denied".
    from rag_ci.run.engine import run_build_steps

    monkeypatch.setenv(process_user.TARGET_USER_VARIABLE, "nobody")
    checkout = shared_dir / "checkout"
    checkout.mkdir(mode=0o755)
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    with pytest.raises(RagCiError) as caught:
        asyncio.run(run_build_steps(["mkdir .index"], checkout, env, log=sys.stderr))
    message = str(caught.value)
    assert "build step failed" in message and "Permission denied" in message
    assert (
        "run as user nobody" in message
        and "give it the access it needs" in message
        and "RAG_CI_TARGET_USER=root" in message
    )
