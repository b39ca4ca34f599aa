"""OCI archives (oci-archive: an OCI image layout in a tar), read and written the way skopeo and
BuildKit's `type=oci` exporter lay them out: index.json names one image index, whose manifests
are each platform's image and BuildKit's attestation manifests (the SBOM beside each platform)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
SPDX = "https://spdx.dev/Document"


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def read_blob(archive: tarfile.TarFile, digest: str) -> bytes:
    member = archive.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}")
    if member is None:
        raise KeyError(digest)
    return member.read()


def top_manifest(path: Path) -> bytes:
    """What `skopeo inspect --raw oci-archive:PATH` prints: the one manifest index.json names."""
    with tarfile.open(path) as archive:
        index = json.loads(archive.extractfile("index.json").read())  # type: ignore[union-attr]
        if len(index["manifests"]) != 1:
            raise ValueError(f"{path}: index.json names {len(index['manifests'])} images, expected one")
        return read_blob(archive, index["manifests"][0]["digest"])


def all_blobs(path: Path) -> dict[str, bytes]:
    """Every blob reachable from the archive's image (what `skopeo copy --all` sends)."""
    with tarfile.open(path) as archive:
        blobs: dict[str, bytes] = {}
        pending = [d["digest"] for d in json.loads(archive.extractfile("index.json").read())["manifests"]]  # type: ignore[union-attr]
        while pending:
            digest = pending.pop()
            data = blobs[digest] = read_blob(archive, digest)
            try:
                body = json.loads(data)
            except ValueError:
                continue
            if isinstance(body, dict) and "schemaVersion" in body:  # an index or a manifest
                pending += [m["digest"] for m in body.get("manifests", [])]
                pending += [layer["digest"] for layer in body.get("layers", [])]
                if "config" in body:
                    pending.append(body["config"]["digest"])
    return blobs


def platform_manifest(index: bytes, architecture: str) -> str:
    for descriptor in json.loads(index)["manifests"]:
        if (descriptor.get("platform") or {}).get("architecture") == architecture:
            return descriptor["digest"]
    raise ValueError(f"no image for linux/{architecture} in the index")


def write_archive(dest: Path, build_args: str, platforms: list[str]) -> str:
    """A two-level OCI layout as BuildKit exports it (an image per platform, an SBOM attestation
    beside each); the image is a marker file, not a build. Returns the image index's digest."""
    blobs: dict[str, bytes] = {}

    def add(data: bytes, media_type: str, **extra) -> dict:
        digest = digest_of(data)
        blobs[digest] = data
        return {"mediaType": media_type, "digest": digest, "size": len(data), **extra}

    descriptors = []
    for platform in platforms:
        os_, _, arch = platform.partition("/")
        layer_tar = io.BytesIO()
        with tarfile.open(fileobj=layer_tar, mode="w") as layer:
            text = f"fake image for {platform}\n{build_args}\n".encode()
            info = tarfile.TarInfo("etc/rag-ci-fake-image")
            info.size = len(text)
            layer.addfile(info, io.BytesIO(text))
        config = json.dumps(
            {"architecture": arch, "os": os_, "config": {"Labels": {"fake": "true"}}}
        ).encode()
        image = add(
            json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": MANIFEST,
                    "config": add(config, "application/vnd.oci.image.config.v1+json"),
                    "layers": [add(layer_tar.getvalue(), "application/vnd.oci.image.layer.v1.tar")],
                }
            ).encode(),
            MANIFEST,
            platform={"architecture": arch, "os": os_},
        )
        sbom = json.dumps(
            {
                "_type": "https://in-toto.io/Statement/v0.1",
                "predicateType": SPDX,
                "predicate": {"spdxVersion": "SPDX-2.3", "name": f"fake sbom {platform}", "packages": []},
            }
        ).encode()
        attestation = add(
            json.dumps(
                {
                    "schemaVersion": 2,
                    "mediaType": MANIFEST,
                    "config": add(b"{}", "application/vnd.oci.image.config.v1+json"),
                    "layers": [
                        add(
                            sbom,
                            "application/vnd.in-toto+json",
                            annotations={"in-toto.io/predicate-type": SPDX},
                        )
                    ],
                }
            ).encode(),
            MANIFEST,
            platform={"architecture": "unknown", "os": "unknown"},
            annotations={
                "vnd.docker.reference.type": "attestation-manifest",
                "vnd.docker.reference.digest": image["digest"],
            },
        )
        descriptors += [image, attestation]
    index = add(
        json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": descriptors}).encode(), INDEX
    )
    layout = {
        "oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
        "index.json": json.dumps({"schemaVersion": 2, "mediaType": INDEX, "manifests": [index]}).encode(),
    }
    with tarfile.open(dest, "w") as archive:
        for name, data in [*layout.items(), *((f"blobs/sha256/{d[7:]}", b) for d, b in blobs.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return index["digest"]
