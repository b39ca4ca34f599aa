"""The docker target's image: hash the build context, reuse a labelled image, or build one.

An image built by rag-ci carries two labels: `rag-ci.sha` (hash of every file the
build can see, after .dockerignore) and `rag-ci.config-hash` (Dockerfile text,
build args, stage). When both match an image the engine already has, the build
is skipped: an unchanged RAG costs no build time on a warm runner.

Blocking (the Docker SDK is synchronous): the target runs these in a thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rag_ci.errors import RagCiError
from rag_ci.logsafe import neutralise

SHA_LABEL = "rag-ci.sha"
CONFIG_HASH_LABEL = "rag-ci.config-hash"
IMAGE_REPOSITORY = "rag-ci-target"
BUILD_LOG_TAIL = 25  # lines quoted when a build fails
_STEP = re.compile(r"^Step \d+/\d+ : ")  # classic builder progress lines
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the classic builder colours a step's stderr red


@dataclass(frozen=True)
class BuildSpec:
    """What to build: absolute paths plus the knobs that change the image."""

    context_dir: Path
    dockerfile: Path
    build_args: Mapping[str, str]
    stage: str | None

    @property
    def dockerfile_in_context(self) -> str:
        """The Dockerfile as the engine wants it: relative to the context when inside it."""
        try:
            return self.dockerfile.relative_to(self.context_dir).as_posix()
        except ValueError:
            return str(self.dockerfile)  # the SDK ships an outside Dockerfile inside the context tarball


@dataclass(frozen=True)
class ImageRef:
    id: str
    tag: str
    reused: bool
    seconds: float


def build_spec(root: Path, dockerfile: str, context: str, build_args: Mapping[str, str], stage: str | None) -> BuildSpec:
    """Resolve config paths (relative to rag-ci.yml, like `docker build -f` from there) and check them."""
    context_dir = (root / context).resolve()
    dockerfile_path = (root / dockerfile).resolve()
    if not context_dir.is_dir():
        raise RagCiError(f"target.context: {context_dir} is not a folder")
    if not dockerfile_path.is_file():
        raise RagCiError(f"target.dockerfile: {dockerfile_path} does not exist")
    return BuildSpec(context_dir, dockerfile_path, dict(build_args), stage)


def context_files(spec: BuildSpec) -> list[str]:
    """The paths the engine will receive, as `docker build` computes them (.dockerignore applied)."""
    from docker.utils.build import exclude_paths

    ignore_file = spec.context_dir / ".dockerignore"
    patterns = ignore_file.read_text(encoding="utf-8").splitlines() if ignore_file.is_file() else []
    patterns = [p.strip() for p in patterns if p.strip() and not p.lstrip().startswith("#")]
    return sorted(exclude_paths(str(spec.context_dir), patterns, dockerfile=spec.dockerfile_in_context))


def context_hash(spec: BuildSpec, files: Iterable[str]) -> str:
    """sha256 over names, executable bits, link targets and contents of the context's files."""
    digest = hashlib.sha256()
    for name in files:
        path = spec.context_dir / name
        digest.update(name.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"X" if os.access(path, os.X_OK) else b"F")
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def config_hash(spec: BuildSpec) -> str:
    """Everything besides the context that changes the image. The Dockerfile text is
    included because it may live outside the context."""
    payload = {
        "dockerfile": spec.dockerfile_in_context,
        "dockerfile_sha": hashlib.sha256(spec.dockerfile.read_bytes()).hexdigest(),
        "build_args": dict(sorted(spec.build_args.items())),
        "stage": spec.stage,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def ensure_image(
    client: Any,
    spec: BuildSpec,
    *,
    log: TextIO = sys.stderr,
    redact: Callable[[str], str] = lambda s: s,
    cancelled: threading.Event | None = None,
) -> ImageRef:
    """Reuse the image whose labels match this context and config, or build it."""
    started = time.monotonic()
    labels = {SHA_LABEL: context_hash(spec, context_files(spec)), CONFIG_HASH_LABEL: config_hash(spec)}
    tag = f"{IMAGE_REPOSITORY}:{labels[SHA_LABEL][:12]}-{labels[CONFIG_HASH_LABEL][:8]}"
    filters = {"label": [f"{key}={value}" for key, value in labels.items()]}
    for image in client.images.list(filters=filters):
        seconds = time.monotonic() - started
        print(f"[rag-ci] docker: reusing image {image.short_id} (context and build config unchanged)", file=log, flush=True)
        return ImageRef(image.id, tag, reused=True, seconds=seconds)

    print(neutralise(f"[rag-ci] docker: building {spec.dockerfile_in_context} in {spec.context_dir} as {tag}"), file=log, flush=True)
    image_id = _stream_build(client, spec, labels, tag, log=log, redact=redact, cancelled=cancelled)
    seconds = time.monotonic() - started
    print(f"[rag-ci] docker: built {image_id[:19]} in {seconds:.1f}s", file=log, flush=True)
    return ImageRef(image_id, tag, reused=False, seconds=seconds)


def _stream_build(
    client: Any,
    spec: BuildSpec,
    labels: dict[str, str],
    tag: str,
    *,
    log: TextIO,
    redact: Callable[[str], str],
    cancelled: threading.Event | None,
) -> str:
    """Run the build, printing one line per Dockerfile step (progress, not a wall of text)
    and keeping the last lines for the error message."""
    from docker.errors import DockerException

    tail: deque[str] = deque(maxlen=BUILD_LOG_TAIL)
    image_id: str | None = None

    def failure(reason: str) -> RagCiError:
        lines = "\n".join(f"    {redact(line)}" for line in tail) or "    (no build output)"
        return RagCiError(f"docker build failed: {redact(reason)}\n  last lines of the build log:\n{lines}")

    try:
        stream = client.api.build(
            path=str(spec.context_dir),
            dockerfile=spec.dockerfile_in_context,
            buildargs=dict(spec.build_args) or None,
            target=spec.stage,
            labels=labels,
            tag=tag,
            rm=True,
            forcerm=True,  # never leave intermediate containers behind, even on failure
            decode=True,
        )
        for chunk in stream:
            if cancelled is not None and cancelled.is_set():
                stream.close()
                raise RagCiError("docker build cancelled")
            if "error" in chunk:
                raise failure(str(chunk.get("error", "")).strip())
            if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
                image_id = chunk["aux"]["ID"]
            for line in _ANSI.sub("", str(chunk.get("stream", ""))).splitlines():
                line = line.rstrip()
                if not line:
                    continue
                tail.append(line)
                if _STEP.match(line):
                    print(neutralise(f"[rag-ci] docker build: {redact(line)[:160]}"), file=log, flush=True)
                elif line.startswith("Successfully built "):
                    image_id = image_id or line.split()[-1]
    except DockerException as exc:
        raise failure(f"{type(exc).__name__}: {exc}") from None
    if not image_id:
        raise failure("the engine reported no image id")
    return image_id
