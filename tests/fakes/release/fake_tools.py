"""The command-line tools release.yml's `run:` steps call, faked against the folder FAKE_STATE
(fake_state.py): `fake_tools.py skopeo|docker|gh ARGS...`, called by the shims in bin/.

  skopeo login/logout --authfile F ... REGISTRY     a containers auth file, as skopeo writes it
  skopeo inspect --raw oci-archive:P | docker://I:T the manifest's bytes
  skopeo copy [--all --preserve-digests|--override-arch A] oci-archive:P docker://I:T|docker-daemon:N
  docker image inspect --format '{{.Architecture}}' N
  gh release view|create|upload, gh pr create|list  against the fake GitHub (GH_TOKEN required)

A call outside these fails saying it is not modelled, rather than pretending.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_gh
import fake_oci
from fake_state import FakeError, Registry, login_in, state_dir, token


def _take(args: list[str], flag: str) -> str | None:
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i : i + 2]
        return value
    return None


def _auth_file(flag: str | None) -> Path:
    if flag:
        return Path(flag)
    if os.environ.get("REGISTRY_AUTH_FILE"):
        return Path(os.environ["REGISTRY_AUTH_FILE"])
    return Path(os.environ.get("XDG_RUNTIME_DIR") or Path.home() / ".config") / "containers" / "auth.json"


def _docker_ref(text: str) -> tuple[str, str]:
    name = text.removeprefix("docker://")
    if "@" in name:
        return tuple(name.split("@", 1))  # type: ignore[return-value]
    image, _, tag = name.rpartition(":")
    return (image, tag) if image and "/" not in tag else (name, "latest")


def skopeo(args: list[str]) -> int:
    state = state_dir()
    auth = _auth_file(_take(args, "--authfile"))
    command, rest = args[0], args[1:]
    if command == "login":
        user = _take(rest, "--username")
        password = sys.stdin.read().strip() if "--password-stdin" in rest else ""
        registry = [a for a in rest if not a.startswith("-")][-1]
        if not user or password != token(state):
            raise FakeError(f"error logging into {registry!r}: invalid username/password")
        document = json.loads(auth.read_text()) if auth.is_file() else {}
        document.setdefault("auths", {})[registry] = {
            "auth": base64.b64encode(f"{user}:{password}".encode()).decode()
        }
        auth.parent.mkdir(parents=True, exist_ok=True)
        auth.write_text(json.dumps(document, indent=1))
        print("Login Succeeded!")
        return 0
    if command == "logout":
        registry = rest[-1]
        document = json.loads(auth.read_text()) if auth.is_file() else {}
        if registry not in document.get("auths", {}):
            raise FakeError(f"not logged into {registry}")
        del document["auths"][registry]
        auth.write_text(json.dumps(document, indent=1))
        print(f"Removed login credentials for {registry}")
        return 0
    if command == "inspect" and rest[:1] == ["--raw"]:
        source = rest[1]
        if source.startswith("oci-archive:"):
            data = fake_oci.top_manifest(Path(source.removeprefix("oci-archive:")))
        else:
            image, reference = _docker_ref(source)
            registry = Registry(state, image)
            if not registry.allows(login_in(auth, image.split("/")[0]), write=False):
                raise FakeError(
                    f"reading manifest {reference} in {image}: unauthorized: authentication required"
                )
            data = registry.blob(registry.resolve(reference))
        sys.stdout.buffer.write(data)
        return 0
    if command == "copy":
        return _copy(state, auth, rest)
    raise FakeError(f"skopeo {' '.join(args[:2])} is not modelled")


def _copy(state: Path, auth: Path, rest: list[str]) -> int:
    arch = _take(rest, "--override-arch")
    flags = {a for a in rest if a.startswith("--")}
    source, dest = [a for a in rest if not a.startswith("--")]
    if not source.startswith("oci-archive:"):
        raise FakeError(f"copy from {source} is not modelled")
    archive = Path(source.removeprefix("oci-archive:"))
    if dest.startswith("docker-daemon:"):
        if not arch:
            raise FakeError("copy to docker-daemon: is modelled with --override-arch only")
        digest = fake_oci.platform_manifest(fake_oci.top_manifest(archive), arch)
        images = _daemon(state)
        images.mkdir(parents=True, exist_ok=True)
        name = dest.removeprefix("docker-daemon:")
        (images / f"{name.replace('/', '_')}.json").write_text(
            json.dumps({"Architecture": arch, "Manifest": digest})
        )
        print(f"Writing manifest to image destination ({name}, {digest})")
        return 0
    if flags != {"--all", "--preserve-digests"} or not dest.startswith("docker://"):
        raise FakeError(
            f"copy {sorted(flags)} to {dest} is not modelled (only --all --preserve-digests to docker://)"
        )
    image, tag = _docker_ref(dest)
    registry = Registry(state, image)
    if not registry.allows(login_in(auth, image.split("/")[0]), write=True):
        raise FakeError(f"trying to reuse blob in {image}: unauthorized: authentication required")
    for digest, data in fake_oci.all_blobs(archive).items():
        registry.put(digest, data)
    top = fake_oci.digest_of(fake_oci.top_manifest(archive))
    registry.tag(tag, top)
    print(f"Writing manifest list to image destination ({image}:{tag} = {top})")
    return 0


def _daemon(state: Path) -> Path:
    """This runner's Docker daemon: every job (every matrix leg) runs on a machine of its own."""
    runner = hashlib.sha256(os.environ.get("RUNNER_TEMP", "").encode()).hexdigest()[:12]
    return state / "docker" / runner / "images"


def docker(args: list[str]) -> int:
    if args[:2] != ["image", "inspect"] or _take(args, "--format") != "{{.Architecture}}":
        raise FakeError(f"docker {' '.join(args[:3])} is not modelled (no Docker engine here)")
    path = _daemon(state_dir()) / f"{args[-1].replace('/', '_')}.json"
    if not path.is_file():
        raise FakeError(f"Error: No such image: {args[-1]}")
    print(json.loads(path.read_text())["Architecture"])
    return 0


def main() -> int:
    tool, args = sys.argv[1], sys.argv[2:]
    try:
        return {"skopeo": skopeo, "docker": docker, "gh": fake_gh.gh}[tool](args)
    except (FakeError, OSError, ValueError, KeyError, IndexError) as exc:
        print(f"{tool}: {exc} (fake)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
