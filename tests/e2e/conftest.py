"""Fixtures shared by the action's end-to-end tests."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from action_harness import HEAD_SHA, MERGE_BASE_SHA, copy_example_repository, example_baseline

from fakes.fake_github import FakeGitHubServer


@pytest.fixture(scope="module")
def baseline_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A baseline results.json of the example, made once per module by a real CLI run."""
    return example_baseline(tmp_path_factory.mktemp("baseline"))


@pytest.fixture
def token() -> str:
    """A fresh fake token per test, so a leak check can grep for it."""
    return "ghs_" + secrets.token_hex(18)


@pytest.fixture
def fake(token: str):
    """A fake GitHub REST server that knows the pull request's merge base, and main's history:
    a…a (the default artifact's commit), the merge base 2…2, then 4…4 and 5…5 (push_event's)."""
    with FakeGitHubServer(token=token) as server:
        server.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        server.graph.line("a" * 40, MERGE_BASE_SHA, "4" * 40, "5" * 40, branch="main")
        server.graph.commit(HEAD_SHA, MERGE_BASE_SHA)
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout of the example repository, as the runner would give it to the action."""
    return copy_example_repository(tmp_path / "workspace")
