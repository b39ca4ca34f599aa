""".ci/docker-engine.sh picks overlay2 where overlayfs mounts on the data root, vfs elsewhere.

vfs copies the image's whole file system for every layer and container (a one-file code
change rebuilt rag-ci's image in about a minute; 1 s on overlay2). The script's probe is run
here on its own (sourcing the script defines its functions and starts nothing).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "docker-engine.sh"


def storage_driver(data_root: Path, **env: str) -> str:
    done = subprocess.run(
        ["bash", "-c", f'source "{SCRIPT}"; DATA_ROOT="{data_root}"; storage_driver'],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def mount_overlay(base: Path) -> Path:
    for name in ("lower", "upper", "work", "merged"):
        (base / name).mkdir(parents=True)
    options = f"lowerdir={base / 'lower'},upperdir={base / 'upper'},workdir={base / 'work'}"
    mounted = subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o", options, str(base / "merged")],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"overlayfs cannot be mounted here: {mounted.stderr.strip()}")
    return base / "merged"


@pytest.fixture
def as_root():
    if os.geteuid() != 0:
        pytest.skip("mounting needs root (the script runs as root in CI)")


def test_overlayfs_on_a_plain_file_system_gets_overlay2_and_the_probe_leaves_nothing(as_root, tmp_path):
    mount_overlay(tmp_path / "check")  # skips where the kernel has no overlayfs
    subprocess.run(["umount", str(tmp_path / "check" / "merged")], check=True)
    data_root = tmp_path / "docker"

    assert storage_driver(data_root) == "overlay2"
    assert list(data_root.iterdir()) == []


def test_a_data_root_on_overlayfs_falls_back_to_vfs(as_root, tmp_path):
    merged = mount_overlay(tmp_path / "layers")  # Docker in Docker: the data root is itself an overlay
    try:
        assert storage_driver(merged / "docker") == "vfs"
    finally:
        subprocess.run(["umount", str(merged)], check=True)


def test_rag_ci_docker_storage_driver_forces_the_driver(tmp_path):
    assert storage_driver(tmp_path / "docker", RAG_CI_DOCKER_STORAGE_DRIVER="vfs") == "vfs"
    assert not (tmp_path / "docker").exists()  # no probe
