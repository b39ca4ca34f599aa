"""The docker target's image: hash the build context, reuse a labelled image, or build one.

An image built by rag-ci carries two labels: `rag-ci.sha` (hash of every file the
build can see, after .dockerignore) and `rag-ci.config-hash` (Dockerfile text,
build args, stage, and the id of every base image its stages start FROM). When both
match an image the engine already has, the build is skipped: an unchanged RAG costs
no build time on a warm runner, and a `FROM app-image` wrapper is rebuilt when the
image behind `app-image` changes. The build itself: rag_ci/targets/docker_build.py.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from rag_ci.errors import RagCiError
from rag_ci.safety.logsafe import neutralise

SHA_LABEL = "rag-ci.sha"
CONFIG_HASH_LABEL = "rag-ci.config-hash"
IMAGE_REPOSITORY = "rag-ci-target"
# ${NAME} or $NAME in a FROM line, from the global ARGs (and the build args overriding them).
_ARG_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


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


def build_spec(
    root: Path, dockerfile: str, context: str, build_args: Mapping[str, str], stage: str | None
) -> BuildSpec:
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


def base_images(spec: BuildSpec) -> list[str]:
    """The images the Dockerfile's stages start FROM (after ARG expansion), stages and scratch aside."""
    from rag_ci.targets.docker_build import instructions

    text = spec.dockerfile.read_text(encoding="utf-8", errors="replace")
    args: dict[str, str] = {}
    stages: set[str] = set()
    bases: list[str] = []
    seen_from = False
    for ins in instructions(text):
        words = ins.text.split()[1:]
        if ins.keyword == "ARG" and not seen_from and words:  # global ARGs: the only ones FROM sees
            name, _, default = words[0].partition("=")
            args[name] = spec.build_args.get(name, default.strip("\"'"))
        elif ins.keyword == "FROM":
            seen_from = True
            words = [w for w in words if not w.startswith("--")]  # --platform=...
            if not words:
                continue
            image = _ARG_REFERENCE.sub(lambda m: args.get(m.group(1) or m.group(2), ""), words[0])
            if len(words) >= 3 and words[1].lower() == "as":
                stages.add(words[2].lower())
            if image.lower() not in stages and image.lower() != "scratch" and image not in bases:
                bases.append(image)
    return bases


def base_image_ids(client: Any, spec: BuildSpec) -> dict[str, str]:
    """Each base image's id on this engine ("absent" when the engine does not have it yet):
    a `FROM app-image` wrapper is rebuilt when the image behind that name changes."""
    from docker.errors import DockerException

    ids = {}
    for name in base_images(spec):
        try:
            ids[name] = client.images.get(name).id
        except DockerException:  # NotFound, or a name the engine cannot parse
            ids[name] = "absent"
    return ids


def config_hash(spec: BuildSpec, bases: Mapping[str, str] | None = None) -> str:
    """Everything besides the context that changes the image. The Dockerfile text is
    included because it may live outside the context; `bases` are the base images' ids."""
    payload = {
        "dockerfile": spec.dockerfile_in_context,
        "dockerfile_sha": hashlib.sha256(spec.dockerfile.read_bytes()).hexdigest(),
        "build_args": dict(sorted(spec.build_args.items())),
        "stage": spec.stage,
    }
    if bases:
        payload["bases"] = dict(sorted(bases.items()))
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def image_labels(client: Any, spec: BuildSpec) -> dict[str, str]:
    """The labels an image of this spec carries, hence the ones its reuse looks for."""
    return {
        SHA_LABEL: context_hash(spec, context_files(spec)),
        CONFIG_HASH_LABEL: config_hash(spec, base_image_ids(client, spec)),
    }


Builder = Literal["auto", "buildx", "classic"]


def ensure_image(
    client: Any,
    spec: BuildSpec,
    *,
    log: TextIO = sys.stderr,
    redact: Callable[[str], str] = lambda s: s,
    cancelled: threading.Event | None = None,
    verbose: bool = False,
    builder: Builder = "auto",
    docker_cli: str | None = None,
) -> ImageRef:
    """Reuse the image whose labels match this context, config and base images, or build it."""
    from rag_ci.targets import docker_build

    started = time.monotonic()
    labels = image_labels(client, spec)
    tag = f"{IMAGE_REPOSITORY}:{labels[SHA_LABEL][:12]}-{labels[CONFIG_HASH_LABEL][:8]}"
    filters = {"label": [f"{key}={value}" for key, value in labels.items()]}
    for image in client.images.list(filters=filters):
        seconds = time.monotonic() - started
        print(
            neutralise(
                f"[rag-ci] docker: reusing image {image.short_id} (context, build config and base images unchanged)"
            ),
            file=log,
            flush=True,
        )
        return ImageRef(image.id, tag, reused=True, seconds=seconds)

    request = docker_build.BuildRequest(
        spec.context_dir,
        spec.dockerfile,
        spec.dockerfile_in_context,
        spec.build_args,
        spec.stage,
        labels,
        tag,
    )
    out = docker_build.BuildLog(log, redact, verbose)
    use_buildx, why_not = (
        (False, "target.builder: classic")
        if builder == "classic"
        else docker_build.buildx_available(docker_cli)
    )
    if builder == "buildx" and not use_buildx:
        raise RagCiError(f"target.builder: buildx, but {why_not}: {docker_build.BUILDX_HINT}")
    how = "BuildKit (docker buildx)" if use_buildx else f"the Docker SDK's classic builder ({why_not})"
    quiet = "" if verbose else "; its output is shown on failure, or always with --verbose / RAG_CI_VERBOSE=1"
    print(
        neutralise(
            f"[rag-ci] docker: building {spec.dockerfile_in_context} in {spec.context_dir} as {tag} with {how}{quiet}"
        ),
        file=log,
        flush=True,
    )
    if use_buildx:
        image_id = docker_build.build_with_buildx(request, out, docker_cli=docker_cli, cancelled=cancelled)
    else:
        if builder == "auto":
            docker_build.refuse_buildkit_only(request, why_not)
        image_id = docker_build.build_with_sdk(client, request, out, cancelled=cancelled)
    seconds = time.monotonic() - started
    print(
        neutralise(
            f"[rag-ci] docker: built {image_id[:19]} in {seconds:.1f}s ({out.lines} lines of build output)"
        ),
        file=log,
        flush=True,
    )
    return ImageRef(image_id, tag, reused=False, seconds=seconds)
