"""Fixtures shared by the action's end-to-end tests."""

from __future__ import annotations

import secrets

import pytest

from action_harness import example_baseline


@pytest.fixture(scope="module")
def baseline_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A baseline results.json of the example, made once per module by a real CLI run."""
    return example_baseline(tmp_path_factory.mktemp("baseline"))


@pytest.fixture
def token() -> str:
    """A fresh fake token per test, so a leak check can grep for it."""
    return "ghs_" + secrets.token_hex(18)
