"""Fixtures for the GitHub adapter tests: a fake GitHub server and a client connected to it."""

from __future__ import annotations

import pytest

from fakes.fake_github import FakeGitHubServer

from rag_ci.github.client import connect
from rag_ci.settings import Secret

FAKE_TOKEN = "t0ken"


@pytest.fixture
def fake():
    with FakeGitHubServer(token=FAKE_TOKEN) as server:
        yield server


@pytest.fixture
def github(fake):
    return connect(fake.url, Secret(FAKE_TOKEN), "acme/rag", seconds_between_requests=0)
