"""Which user the target runs as when rag-ci runs as root (rag_ci.targets.processes)."""

from __future__ import annotations

import os
import pwd

import pytest

from rag_ci.targets import processes

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the target changes user only when rag-ci runs as root")


@pytest.fixture(autouse=True)
def _fresh_choice():
    processes._choose_user.cache_clear()
    yield
    processes._choose_user.cache_clear()


def test_a_root_owned_checkout_outside_actions_keeps_root_and_says_so(tmp_path, capsys):
    os.chown(tmp_path, 0, 0)
    assert processes._choose_user(str(tmp_path), "", False) is None
    assert "RAG_CI_TARGET_USER" in capsys.readouterr().err


def test_a_root_owned_checkout_inside_actions_or_the_image_runs_the_target_as_nobody(tmp_path):
    os.chown(tmp_path, 0, 0)
    user = processes._choose_user(str(tmp_path), "", True)
    assert user is not None and user.uid == pwd.getpwnam("nobody").pw_uid


def test_a_checkout_owned_by_a_user_runs_the_target_as_that_user(tmp_path):
    nobody = pwd.getpwnam("nobody")
    os.chown(tmp_path, nobody.pw_uid, nobody.pw_gid)
    user = processes._choose_user(str(tmp_path), "", False)
    assert user is not None and (user.uid, user.gid) == (nobody.pw_uid, nobody.pw_gid)


def test_the_workflow_can_name_the_user_or_keep_root(tmp_path):
    assert processes._choose_user(str(tmp_path), "root", True) is None
    assert processes._choose_user(str(tmp_path), "nobody", False).name == "nobody"
