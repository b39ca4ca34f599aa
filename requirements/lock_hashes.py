#!/usr/bin/env python3
"""Add hashes to pinned requirements: `name==version` lines in, the lock's lines out.

  python3 requirements/lock_hashes.py PINS      (PINS: one `name==version` a line; `-` reads stdin)

Each pin is followed by one `--hash=sha256:...` line for every wheel and sdist the index publishes
for that exact version, as pip-compile --generate-hashes writes them: one lock then serves the
linux/amd64 and linux/arm64 images and any CPython, and pip refuses a file whose bytes differ.
The hashes come from the index's JSON simple API (PEP 691), the one pip reads itself; the index is
PyPI unless RAG_CI_LOCK_INDEX names another (a mirror that serves PEP 691). A pin for which the
index lists no file stops the script: a lock line without a hash would fail every install.

Standard library only: it runs before any environment exists (update-action-lock.sh --rehash).
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.request

INDEX = os.environ.get("RAG_CI_LOCK_INDEX", "https://pypi.org/simple/")
ACCEPT = "application/vnd.pypi.simple.v1+json"
PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
SDIST_SUFFIXES = (".tar.gz", ".zip")


class LockError(Exception):
    """Why the lock could not be written, said in a line."""


def canonical(name: str) -> str:
    """PEP 503's normalized project name: the index's URL for it, and how filenames are compared."""
    return re.sub(r"[-_.]+", "-", name).lower()


def file_version(filename: str) -> str | None:
    """The version a distribution file carries in its name (wheel or sdist), or None for other
    kinds (eggs, installers) that pip does not install from an index."""
    if filename.endswith(".whl"):
        parts = filename[: -len(".whl")].split("-")
        return parts[1] if len(parts) >= 5 else None
    for suffix in SDIST_SUFFIXES:
        if filename.endswith(suffix):
            _, sep, version = filename[: -len(suffix)].rpartition("-")
            return version if sep else None
    return None


def same_version(a: str, b: str) -> bool:
    """Versions equal as the pins compare: pip freeze prints them normalized, and an older file
    name may spell a pre-, post- or dev-release with a separator (1.0-post1) or a capital."""
    spelled = lambda v: re.sub(r"[-_.]?(post|dev|a|b|rc)(?=\d)", r"\1", v.lower())
    return spelled(a) == spelled(b)


def hashes(name: str, version: str, files: list[dict]) -> list[str]:
    """The sha256 of every wheel and sdist of NAME at VERSION among the index's FILES, sorted."""
    found = {
        entry["hashes"]["sha256"]
        for entry in files
        if "sha256" in entry.get("hashes", {})
        and (got := file_version(entry["filename"])) is not None
        and same_version(got, version)
    }
    if not found:
        raise LockError(f"{INDEX} lists no wheel or sdist with a sha256 for {name}=={version}")
    return sorted(found)


def index_files(name: str) -> list[dict]:
    """The index's file list for NAME (PEP 691 JSON)."""
    request = urllib.request.Request(f"{INDEX.rstrip('/')}/{canonical(name)}/", headers={"Accept": ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)["files"]
    except (OSError, ValueError, KeyError) as exc:
        raise LockError(f"{INDEX}: no file list for {name}: {exc}") from None


def lock_lines(pins: list[str]) -> list[str]:
    """The lock's requirement lines for PINS: `name==version \\` then its hashes, continued."""
    lines: list[str] = []
    for pin in pins:
        match = PIN.fullmatch(pin.strip())
        if match is None:
            raise LockError(f"not a `name==version` pin: {pin!r}")
        name, version = match.groups()
        digests = hashes(name, version, index_files(name))
        lines.append(f"{name}=={version} \\")
        lines += [
            f"    --hash=sha256:{d}" + (" \\" if i < len(digests) - 1 else "") for i, d in enumerate(digests)
        ]
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source = sys.stdin if argv[0] == "-" else open(argv[0], encoding="utf-8")  # noqa: SIM115
    with source:
        pins = [line for line in source.read().splitlines() if line.strip() and not line.startswith("#")]
    try:
        print("\n".join(lock_lines(pins)))
    except LockError as exc:
        print(f"lock_hashes: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
