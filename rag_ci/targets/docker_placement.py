"""Where the docker target's container is reached: on the network of the container rag-ci runs
in (the GitHub Action's own, on the job's network), else on a port published on 127.0.0.1."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunnerHost:
    """Where rag-ci itself runs: decides how the container is reached."""

    in_container: bool
    hostname: str


@dataclass(frozen=True)
class Placement:
    """How the target container is wired: joined to `network`, or port published on 127.0.0.1."""

    network: str | None
    reason: str


def detect_runner_host() -> RunnerHost:
    markers = ("/.dockerenv", "/run/.containerenv")
    return RunnerHost(in_container=any(os.path.exists(m) for m in markers), hostname=socket.gethostname())


def choose_placement(client: Any, host: RunnerHost) -> Placement:
    """Join the network of the container rag-ci runs in, when the engine knows that container."""
    from docker.errors import APIError

    if not host.in_container:
        return Placement(None, "not in a container: port published on 127.0.0.1")
    try:
        me = client.containers.get(host.hostname)
    except APIError:  # NotFound included: a container of another engine (or a VM that looks like one)
        return Placement(
            None, f"in a container ({host.hostname}) this engine does not run: port published on 127.0.0.1"
        )
    mode = me.attrs.get("HostConfig", {}).get("NetworkMode", "")
    networks = list(me.attrs.get("NetworkSettings", {}).get("Networks") or {})
    if mode == "host" or not networks or networks == ["host"]:
        return Placement(
            None, f"container {host.hostname} uses the host network: port published on 127.0.0.1"
        )
    # A user-defined network (the job's) over the default bridge: that is what GitHub creates.
    chosen = next((n for n in networks if n not in ("bridge", "host", "none")), networks[0])
    return Placement(chosen, f"inside container {host.hostname}: joining its network {chosen}")
