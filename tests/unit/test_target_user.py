"""Which user the target runs as when rag-ci runs as root (rag_ci.targets.process_user)."""

from __future__ import annotations

import grp
import os
import pwd
import socket

import pytest

from drive import uid_without_account
from rag_ci.targets import process_user

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="the target changes user only when rag-ci runs as root"
)


@pytest.fixture(autouse=True)
def _fresh_choice():
    process_user._choose_user.cache_clear()
    yield
    process_user._choose_user.cache_clear()


def test_a_root_owned_checkout_outside_actions_keeps_root_and_says_so(tmp_path, capsys):
    os.chown(tmp_path, 0, 0)
    assert process_user._choose_user(str(tmp_path), "", False) is None
    assert "RAG_CI_TARGET_USER" in capsys.readouterr().err


def test_a_root_owned_checkout_inside_actions_or_the_image_runs_the_target_as_nobody(tmp_path):
    os.chown(tmp_path, 0, 0)
    user = process_user._choose_user(str(tmp_path), "", True)
    assert user is not None and user.uid == pwd.getpwnam("nobody").pw_uid


def test_a_checkout_owned_by_a_user_runs_the_target_as_that_user(tmp_path):
    nobody = pwd.getpwnam("nobody")
    os.chown(tmp_path, nobody.pw_uid, nobody.pw_gid)
    user = process_user._choose_user(str(tmp_path), "", False)
    assert user is not None and (user.uid, user.gid) == (nobody.pw_uid, nobody.pw_gid)


def test_the_workflow_can_name_the_user_or_keep_root(tmp_path):
    assert process_user._choose_user(str(tmp_path), "root", True) is None
    assert process_user._choose_user(str(tmp_path), "nobody", False).name == "nobody"


def test_the_target_gets_its_users_own_group_never_the_checkouts(tmp_path):
    # GitHub's runners: the checkout is runner:docker. Before: the target ran with that group.
    daemon = pwd.getpwnam("daemon")
    os.chown(tmp_path, daemon.pw_uid, 4)  # a group that is not daemon's own
    user = process_user._choose_user(str(tmp_path), "", True)
    assert user is not None and (user.uid, user.gid) == (daemon.pw_uid, daemon.pw_gid)
    assert user.kwargs()["extra_groups"] == []


def test_a_uid_without_an_account_gets_nogroup_instead_of_the_checkouts_group(tmp_path):
    # Inside the action's container the runner's uid (1001) has no account.
    uid = uid_without_account()
    os.chown(tmp_path, uid, 4)
    user = process_user._choose_user(str(tmp_path), "", True)
    assert user is not None and user.uid == uid and user.gid == grp.getgrnam("nogroup").gr_gid


def test_a_primary_group_that_owns_the_docker_socket_is_replaced_by_nogroup(tmp_path):
    engine = tmp_path / "docker.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(engine))
        daemon = pwd.getpwnam("daemon")
        os.chown(engine, 0, daemon.pw_gid)
        assert (
            process_user.own_group(daemon.pw_uid, {"DOCKER_HOST": f"unix://{engine}"})
            == grp.getgrnam("nogroup").gr_gid
        )
