"""Fixtures: fake judge provider servers for the judge tests; a fake GitHub server and a client
connected to it for the GitHub adapter tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")

from fakes.fake_github import FakeGitHubServer
from fakes.judge_servers import SERVERS, FakeJudgeServer
from rag_ci.action.settings import Secret
from rag_ci.github.client import connect


@pytest.fixture
def fake_judge() -> Iterator[Any]:
    """`fake_judge("openai", latency_s=…)` starts a fake server for that provider (stopped after the test)."""
    started: list[FakeJudgeServer] = []

    def start(provider: str = "openai", **options: Any) -> FakeJudgeServer:
        server = SERVERS[provider](**options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


FAKE_TOKEN = "t0ken"


@pytest.fixture
def fake():
    with FakeGitHubServer(token=FAKE_TOKEN) as server:
        yield server


@pytest.fixture
def github(fake):
    return connect(fake.url, Secret(FAKE_TOKEN), "acme/rag", seconds_between_requests=0)
