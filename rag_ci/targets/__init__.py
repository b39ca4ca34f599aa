"""Targets: the user's RAG behind one protocol, chosen by `target.kind`.

A small registry, so that a new kind is one class and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag_ci.core.config import (
    CommandTargetConfig,
    DockerTargetConfig,
    HttpTargetConfig,
    PythonTargetConfig,
    TargetConfig,
)
from rag_ci.targets.base import WARMUP_ID_PREFIX, Target, TargetReply, parse_reply
from rag_ci.targets.processes import target_env
from rag_ci.targets.traces.wiring import traced


def _python(config: PythonTargetConfig, root: Path) -> Target:
    from rag_ci.targets.python import PythonTarget

    return PythonTarget(
        config.entry,
        search_path=[root, *(root / p for p in config.path)],
        env=target_env(config),
        processes=config.processes,
        restart_limit=config.restart_limit,
        python=config.python,
        root=root,
        import_timeout_s=config.timeout_s,
    )


def _command(config: CommandTargetConfig, root: Path) -> Target:
    from rag_ci.targets.command import CommandTarget

    return CommandTarget(
        config.command,
        cwd=root,
        env=target_env(config),
        processes=config.processes,
        restart_limit=config.restart_limit,
    )


def _http(config: HttpTargetConfig, root: Path) -> Target:
    from rag_ci.targets.http import HttpTarget, mapping_arguments

    return HttpTarget(
        config.url,
        timeout_s=config.timeout_s,
        headers=config.headers,
        health_url=config.health,
        startup_timeout_s=config.startup_timeout_s,
        start=config.start,
        cwd=root,
        env=target_env(config),
        max_connections=config.concurrency,
        **mapping_arguments(config),
    )


def _docker(config: DockerTargetConfig, root: Path, verbose: bool = False) -> Target:
    from rag_ci.targets.docker import DockerTarget

    return DockerTarget(config, root, verbose=verbose)


TARGET_KINDS: dict[str, Callable[..., Target]] = {
    "python": _python,
    "command": _command,
    "http": _http,
    "docker": _docker,
}


def build_target(config: TargetConfig, root: Path, *, verbose: bool = False) -> Target:
    """`verbose`: the docker target's image build output goes to the log (else its tail, on failure)."""
    if isinstance(config, DockerTargetConfig):
        return traced(config, lambda c: _docker(c, root, verbose))
    return traced(config, lambda c: TARGET_KINDS[c.kind](c, root))


def describe_target(config: TargetConfig) -> str:
    """The target as messages name it: its kind and what the user configured it with."""
    return config.describe()


__all__ = [
    "TARGET_KINDS",
    "WARMUP_ID_PREFIX",
    "Target",
    "TargetReply",
    "build_target",
    "describe_target",
    "parse_reply",
]
