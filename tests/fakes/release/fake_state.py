"""The public world of the act rehearsal, kept in one folder (FAKE_STATE), and what in it is
public and what it refers to.

  github/origin.git        the repository (bare): branches and tags pushed by jobs
  github/token             the one token the fakes accept (the run's GITHUB_TOKEN)
  github/releases/TAG/     release.json and assets/
  github/attestations/HEX/ attestations stored through the API, by subject digest
  github/pulls/N.json      pull requests (their branches are in origin.git)
  registry/HOST/OWNER/NAME/ blobs/HEX, tags/TAG (a digest), private (GHCR: a new package is
                           private), referrers/HEX/ (attestations pushed beside the image)
  pypi/PROJECT/FILE        uploaded files (FILE.attestation.json: its PEP 740 attestation)
  artifacts/RUN_ID/NAME/   the workflow run's artifacts
  docker/RUNNER/images/    the fake Docker daemon of each runner (each job, each matrix leg)

"Public" and "dangling" are .github/scripts/rehearse_jobs.py's words: a public thing refers to
other public things (REFERS_TO there); here each reference is followed in the bytes that are
public (action.yml at the tag, the wheel's pinned commit, the release's tag).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

RELEASED_ACTION = "rag_ci/templates/workflows/released-action.txt"


class FakeError(Exception):
    """What the faked service would answer instead of doing it, said in a line."""


def state_dir() -> Path:
    if not os.environ.get("FAKE_STATE"):
        raise FakeError("FAKE_STATE is not set: the fakes have no world to act on")
    return Path(os.environ["FAKE_STATE"])


def token(state: Path) -> str:
    return (state / "github" / "token").read_text(encoding="utf-8").strip()


def origin(state: Path) -> Path:
    return state / "github" / "origin.git"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode:
        raise FakeError(f"git {' '.join(args[:3])}: {done.stderr.strip()}")
    return done.stdout


def remote_tags(state: Path) -> dict[str, str]:
    """tag -> the commit it names (annotated tags peeled)."""
    tags: dict[str, str] = {}
    for line in git(
        origin(state), "for-each-ref", "--format=%(refname:short) %(*objectname) %(objectname)", "refs/tags"
    ).splitlines():
        name, *shas = line.split()
        tags[name] = shas[0]
    return tags


class Registry:
    """One image repository of the fake registry (ghcr.io/OWNER/NAME)."""

    def __init__(self, state: Path, image: str) -> None:
        if not re.fullmatch(r"[a-z0-9.-]+(:\d+)?/[a-z0-9._/-]+", image):
            raise FakeError(f"invalid reference format: {image!r}")
        self.image, self.path = image, state / "registry" / image
        self.state = state

    def exists(self) -> bool:
        return (self.path / "tags").is_dir()

    def private(self) -> bool:
        return (self.path / "private").exists()

    def blob(self, digest: str) -> bytes:
        path = self.path / "blobs" / digest.removeprefix("sha256:")
        if not path.is_file():
            raise FakeError(f"manifest unknown: {self.image}@{digest}")
        return path.read_bytes()

    def has(self, digest: str) -> bool:
        return (self.path / "blobs" / digest.removeprefix("sha256:")).is_file()

    def put(self, digest: str, data: bytes) -> None:
        path = self.path / "blobs" / digest.removeprefix("sha256:")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def tag(self, tag: str, digest: str) -> None:
        if not self.exists():
            (self.path / "tags").mkdir(parents=True)
            (self.path / "private").touch()  # GHCR: a package is private after its first push
        (self.path / "tags" / tag).write_text(digest, encoding="utf-8")

    def resolve(self, reference: str) -> str:
        if reference.startswith("sha256:"):
            return reference
        path = self.path / "tags" / reference
        if not path.is_file():
            raise FakeError(f"manifest unknown: {self.image}:{reference}")
        return path.read_text(encoding="utf-8").strip()

    def allows(self, login: tuple[str, str] | None, *, write: bool) -> bool:
        if login and login[1] == token(self.state):
            return True
        return not write and self.exists() and not self.private()


def login_in(auth_file: Path, registry: str) -> tuple[str, str] | None:
    """(user, password) of REGISTRY in a containers/Docker auth file, or None."""
    try:
        auths = json.loads(auth_file.read_text(encoding="utf-8")).get("auths") or {}
    except (OSError, ValueError):
        return None
    entry = auths.get(registry) or {}
    user, _, password = base64.b64decode(entry.get("auth", "")).decode(errors="replace").partition(":")
    return (user, password) if password else None


def public(state: Path) -> dict[str, list[str]]:
    """Each public thing, in rehearse_jobs.py's words, and what of it is there."""
    found: dict[str, list[str]] = {}
    registry_root = state / "registry"
    for tags in sorted(registry_root.glob("*/*/*/tags")) if registry_root.is_dir() else []:
        found.setdefault("image", []).extend(
            f"{tags.parent.relative_to(registry_root)}:{t.name}" for t in sorted(tags.iterdir())
        )
    attestations = sorted((state / "github" / "attestations").glob("*/*.json"))
    if attestations:
        found["attestation"] = [f"sha256:{p.parent.name}" for p in attestations]
    if tags := remote_tags(state):
        found["tags"] = sorted(tags)
    if files := sorted(p.name for p in (state / "pypi").glob("*/*") if not p.name.endswith(".json")):
        found["pypi"] = files
    if releases := sorted(p.name for p in (state / "github" / "releases").glob("*")):
        found["github release"] = releases
    if pulls := sorted(
        json.loads(p.read_text())["head"] for p in (state / "github" / "pulls").glob("*.json")
    ):
        found["pin pull request"] = pulls
    return found


def _image_of_commit(state: Path, sha: str) -> tuple[str, str]:
    action = git(origin(state), "show", f"{sha}:action.yml")
    match = re.search(r"^  image: docker://([^@\s]+)@(sha256:[0-9a-f]{64})", action, flags=re.M)
    if not match:
        raise FakeError(f"action.yml at {sha[:12]} runs no image by digest")
    return match[1], match[2]


def dangling(state: Path) -> list[str]:
    """`thing -> what it refers to` for every reference of a public thing that is not public."""
    found: list[str] = []
    tags = remote_tags(state)
    for record in sorted((state / "github" / "attestations").glob("*/*.json")):
        subject = json.loads(record.read_text(encoding="utf-8"))
        if not Registry(state, subject["name"]).has(subject["digest"]):
            found.append(f"attestation -> image ({subject['name']}@{subject['digest']})")
    for tag, sha in tags.items():
        if not tag.startswith("v"):
            continue
        image, digest = _image_of_commit(state, sha)
        registry = Registry(state, image)
        if not registry.has(digest):
            found.append(f"tags -> image ({tag}: {image}@{digest})")
        elif registry.private():
            found.append(f"tags -> image pullable ({tag}: {image} is private)")
    for wheel in sorted((state / "pypi").glob("*/*.whl")):
        pinned = zipfile.ZipFile(wheel).read(RELEASED_ACTION).decode().split()
        repository, _, sha = pinned[0].partition("@")
        version = pinned[-1]
        if tags.get(version) != sha:
            found.append(
                f"pypi -> tags ({wheel.name} pins {sha[:12]}, {version} names {tags.get(version, 'nothing')})"
            )
    for pull in sorted((state / "github" / "pulls").glob("*.json")):
        head = json.loads(pull.read_text())["head"]
        pin = git(origin(state), "show", f"refs/heads/{head}:{RELEASED_ACTION}").split()
        if tags.get(pin[-1]) != pin[0].partition("@")[2]:
            found.append(
                f"pin pull request -> tags ({head} pins {pin[0]}, {pin[-1]} names {tags.get(pin[-1], 'nothing')})"
            )
    for release in sorted((state / "github" / "releases").glob("*")):
        version = release.name.removeprefix("v")
        if release.name not in tags:
            found.append(f"github release -> tags ({release.name})")
        if not list((state / "pypi").glob(f"*/*-{version}[.-]*")):
            found.append(f"github release -> pypi ({version} is not on PyPI)")
    return found
