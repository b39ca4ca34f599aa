#!/usr/bin/env python3
"""The release's files, checked byte for byte (.github/workflows/release.yml).

  sums DIST --output FILE       SHA256SUMS of the sdist and the wheel (exactly one of each),
                                written to FILE and printed as one base64 line: build's job
                                output, which pypi and github-release check every file against
  verify DIST SUMS              DIST holds exactly the files SUMS names, with those hashes
  sbom ARCHIVE --output-dir DIR the SPDX documents BuildKit attached to the OCI archive, one a
                                platform (sbom-linux-amd64.spdx.json, ...): the GitHub Release's
  docker-auth FILE REGISTRY     FILE holds a login for REGISTRY as Docker's config.json holds one,
                                the only place actions/attest-build-provenance's registry push
                                reads credentials from (@sigstore/oci): skopeo wrote it there

Standard library only: the jobs that run it install nothing.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import json
import sys
import tarfile
from pathlib import Path

SPDX = "https://spdx.dev/Document"
ATTESTATION = "attestation-manifest"


class ReleaseFileError(Exception):
    """What is wrong with a release file, said in a line."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sums(dist: Path) -> str:
    """`<sha256>  <name>` lines, sha256sum's format, for exactly one sdist and one wheel."""
    files = sorted(p for p in dist.iterdir() if p.is_file())
    kinds = sorted(
        "wheel" if p.suffix == ".whl" else "sdist" if p.name.endswith(".tar.gz") else p.name for p in files
    )
    if kinds != ["sdist", "wheel"]:
        raise ReleaseFileError(f"{dist} must hold one sdist and one wheel, not {[p.name for p in files]}")
    return "".join(f"{sha256(p)}  {p.name}\n" for p in files)


def verify(dist: Path, sums_text: str) -> list[str]:
    """The names checked; any file missing, added or changed is an error."""
    expected: dict[str, str] = {}
    for number, line in enumerate(sums_text.splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name or "/" in name:
            raise ReleaseFileError(f"SHA256SUMS line {number} is not '<sha256>  <name>': {line!r}")
        expected[name] = digest
    present = {p.name for p in dist.iterdir() if p.is_file()}
    if present != set(expected):
        raise ReleaseFileError(
            f"{dist} holds {sorted(present)}, build made {sorted(expected)}: "
            "download the artifact of this run again"
        )
    for name, digest in sorted(expected.items()):
        if sha256(dist / name) != digest:
            raise ReleaseFileError(f"{name} is not the file build made (sha256 differs)")
    return sorted(expected)


def _blob(archive: tarfile.TarFile, digest: str) -> bytes:
    algorithm, _, hexdigest = digest.partition(":")
    member = archive.extractfile(f"blobs/{algorithm}/{hexdigest}")
    if member is None:
        raise ReleaseFileError(f"the archive has no blob {digest}")
    data = member.read()
    if hashlib.sha256(data).hexdigest() != hexdigest:
        raise ReleaseFileError(f"blob {digest} does not match its digest")
    return data


def sboms(archive_path: Path) -> dict[str, dict]:
    """{'linux-amd64': SPDX document, ...}: each platform's SBOM attestation in an OCI archive
    (the attestation manifests BuildKit adds beside each platform's image in the index)."""
    found: dict[str, dict] = {}
    with tarfile.open(archive_path) as archive:
        pending = [json.loads(archive.extractfile("index.json").read())]  # type: ignore[union-attr]
        while pending:
            index = pending.pop()
            platforms = {
                d["digest"]: "-".join(
                    filter(None, (d["platform"].get("os"), d["platform"].get("architecture")))
                )
                for d in index.get("manifests", [])
                if d.get("platform")
            }
            for descriptor in index.get("manifests", []):
                annotations = descriptor.get("annotations") or {}
                body = json.loads(_blob(archive, descriptor["digest"]))
                if "manifests" in body:  # a nested index: the image's own
                    pending.append(body)
                elif annotations.get("vnd.docker.reference.type") == ATTESTATION:
                    platform = platforms.get(annotations.get("vnd.docker.reference.digest", ""), "unknown")
                    for layer in body.get("layers", []):
                        if (layer.get("annotations") or {}).get("in-toto.io/predicate-type") == SPDX:
                            found[platform] = json.loads(_blob(archive, layer["digest"]))["predicate"]
    if not found:
        raise ReleaseFileError(f"{archive_path} carries no SPDX attestation: build it with `sbom: true`")
    return found


def docker_login(config: Path, registry: str) -> tuple[str, str]:
    """The user name and password the attestation would push with to REGISTRY, read from a
    Docker-style config.json the way @sigstore/oci 0.6.0's getRegistryCredentials reads it (the
    version actions/attest-build-provenance v4.1.0 runs; tests/integration/test_attest_credentials.py
    runs that function on the same files): the first `auths` key that contains the registry's
    host, whose `auth` is base64 of `user:password`, or its `identitytoken` as the password.
    Refused: no file, no entry (a credential helper is never read), or no user and password."""
    try:
        document = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReleaseFileError(f"no credentials file at {config}: log in with --authfile {config}") from None
    except (OSError, ValueError) as exc:
        raise ReleaseFileError(f"{config} is not a credentials file: {exc}") from None
    auths = (document.get("auths") if isinstance(document, dict) else None) or {}
    key = next((k for k in auths if registry in k), None)
    if key is None or not isinstance(auths[key], dict):
        raise ReleaseFileError(f"{config} holds no login for {registry} (a credential helper is not read)")
    entry = auths[key]
    encoded = entry.get("auth") if isinstance(entry.get("auth"), str) else ""
    try:
        # Node's base64 decoder (the action's) accepts a missing padding: so does this.
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        decoded = ""
    user, sep, password = decoded.partition(":")
    password = entry.get("identitytoken") or password
    if not (user and sep and password):
        raise ReleaseFileError(f"{config}: the login for {registry} is not base64 of user:password")
    return user, password


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release_files.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    step = sub.add_parser("sums")
    step.add_argument("dist", type=Path)
    step.add_argument("--output", type=Path, required=True)
    step = sub.add_parser("verify")
    step.add_argument("dist", type=Path)
    step.add_argument("sums", type=Path)
    step = sub.add_parser("sbom")
    step.add_argument("archive", type=Path)
    step.add_argument("--output-dir", type=Path, required=True)
    step = sub.add_parser("docker-auth")
    step.add_argument("config", type=Path)
    step.add_argument("registry")
    args = parser.parse_args(argv)
    try:
        if args.step == "sums":
            text = sums(args.dist)
            args.output.write_text(text, encoding="utf-8")
            print(base64.b64encode(text.encode()).decode())
        elif args.step == "verify":
            print("release: checked " + ", ".join(verify(args.dist, args.sums.read_text(encoding="utf-8"))))
        elif args.step == "sbom":
            for platform, document in sorted(sboms(args.archive).items()):
                path = args.output_dir / f"sbom-{platform}.spdx.json"
                path.write_text(json.dumps(document, indent=1), encoding="utf-8")
                print(f"release: {path.name}")
        else:
            user, _ = docker_login(args.config, args.registry)
            print(f"release: {args.config} logs {user} in to {args.registry}, as the attestation reads it")
    except (ReleaseFileError, OSError, KeyError, ValueError, tarfile.TarError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
