"""Every target kind states how many calls it takes at once (Target.max_parallel), so the
engine reads the attribute rather than guessing with getattr."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rag_ci.core.config import CommandTargetConfig, DockerTargetConfig, HttpTargetConfig, PythonTargetConfig
from rag_ci.targets import TARGET_KINDS, Target, build_target
from rag_ci.targets.docker import DockerTarget

CONFIGS = {
    "python": PythonTargetConfig(kind="python", entry="tiny_rag:answer", processes=3),
    "command": CommandTargetConfig(kind="command", command=["python", "rag.py"], processes=2),
    "http": HttpTargetConfig(kind="http", url="http://127.0.0.1:9/query"),
}


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_every_target_kind_declares_max_parallel(kind, tmp_path: Path):
    target = build_target(CONFIGS[kind], tmp_path)
    assert isinstance(target, Target)
    expected = getattr(CONFIGS[kind], "processes", None)
    assert target.max_parallel == expected


def test_the_docker_target_declares_max_parallel(tmp_path: Path):
    target = DockerTarget(
        DockerTargetConfig(kind="docker"), tmp_path, client=object(), environ={}, log=io.StringIO()
    )
    assert isinstance(target, Target) and target.max_parallel is None


def test_the_protocol_names_max_parallel():
    # read-only: a command target widens its own
    assert isinstance(Target.__dict__.get("max_parallel"), property)
    assert set(TARGET_KINDS) == {*CONFIGS, "docker"}
