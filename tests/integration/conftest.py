"""Fixtures for the judge tests: fake provider servers and configs pointing at them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")

from fakes.judge_servers import SERVERS, FakeJudgeServer  # noqa: E402

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
