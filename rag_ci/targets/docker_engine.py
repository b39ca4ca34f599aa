"""Reaching the Docker engine (DOCKER_HOST, or the local socket) through the Docker SDK, an optional dependency."""

from __future__ import annotations

from typing import Any

from rag_ci.errors import RagCiError


def docker_client() -> Any:
    try:
        import docker
    except ImportError:
        raise RagCiError(
            "the docker target needs the Docker SDK: pip install 'rag-ci-gate[docker]'"
        ) from None
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        raise RagCiError(
            f"cannot reach the Docker engine: {exc} (is dockerd running? is DOCKER_HOST right?)"
        ) from None
    return client
