"""What the fake actions of actions/ do (`fake_actions.py STEP`, inputs in the environment the
action's action.yml maps them to), against the folder FAKE_STATE (fake_state.py)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fake_oci
from fake_state import FakeError, Registry, state_dir, token

env = os.environ.get


def _output(**values: str) -> None:
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as stream:
        stream.writelines(f"{k}={v}\n" for k, v in values.items())


def _run(*command: str) -> None:
    subprocess.run(command, check=True)


def checkout() -> None:
    """As actions/checkout does it: the event's sha (or the `ref` input: a branch, a tag or a
    sha) fetched with fetch-depth (0: all history), a branch checked out as origin/BRANCH."""
    workspace = Path(os.environ["GITHUB_WORKSPACE"])
    ref = env("REF") or os.environ["GITHUB_SHA"]
    branch = (env("REF") or os.environ["GITHUB_REF"]).removeprefix("refs/heads/")
    for child in workspace.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    git = ["git", "-C", str(workspace)]
    _run(*git, "init", "-q")
    _run(*git, "remote", "add", "origin", f"{env('GITHUB_SERVER_URL')}/{env('GITHUB_REPOSITORY')}")
    depth = [] if env("DEPTH") == "0" else [f"--depth={env('DEPTH') or 1}"]
    _run(*git, "fetch", "-q", *depth, "origin", f"+{ref}:refs/remotes/origin/{branch}")
    if env("SPARSE"):
        _run(*git, "sparse-checkout", "set", *env("SPARSE", "").split())
    _run(*git, "checkout", "-q", "--force", "-B", branch, f"refs/remotes/origin/{branch}")
    if env("PERSIST") == "true":  # what the real action leaves in .git/config
        basic = base64.b64encode(f"x-access-token:{token(state_dir())}".encode()).decode()
        _run(*git, "config", f"http.{env('GITHUB_SERVER_URL')}/.extraheader", f"AUTHORIZATION: basic {basic}")
    print(f"fake checkout: {env('GITHUB_REPOSITORY')}@{ref} ({branch})")


def setup_python() -> None:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not version.startswith(env("WANTED", "")):
        raise FakeError(f"python {env('WANTED')} asked for, this machine has {version}")
    venv = Path(os.environ["RUNNER_TEMP"]) / f"python-{version}"
    _run(sys.executable, "-m", "venv", str(venv))
    with open(os.environ["GITHUB_PATH"], "a", encoding="utf-8") as stream:
        stream.write(f"{venv / 'bin'}\n")
    print(f"fake setup-python: a fresh environment of python {version} first on PATH")


def build_push() -> None:
    if env("PUSH") != "false":
        raise FakeError("the fake builder writes archives only (push: false)")
    output = dict(part.split("=", 1) for part in env("OUTPUTS", "").split(","))
    if output.get("type") != "oci" or not output.get("dest"):
        raise FakeError(f"outputs {env('OUTPUTS')!r}: only type=oci,dest=FILE is modelled")
    if not (Path(env("CONTEXT", ".")) / "Dockerfile").is_file():
        raise FakeError("failed to read dockerfile: open Dockerfile: no such file or directory")
    platforms = [p.strip() for p in env("PLATFORMS", "").split(",") if p.strip()]
    digest = fake_oci.write_archive(Path(output["dest"]), env("BUILD_ARGS", ""), platforms)
    if env("SBOM") != "true":
        raise FakeError("the fake builder always attaches an SBOM: ask for it (sbom: true)")
    _output(digest=digest)
    print(f"fake build: {', '.join(platforms)} -> {output['dest']} ({digest})")


def _artifact(run: str, name: str) -> Path:
    return state_dir() / "artifacts" / run / name


def upload_artifact() -> None:
    source, name = Path(env("UPLOAD", "")), env("NAME", "artifact")
    files = (
        [p for p in source.rglob("*") if p.is_file()]
        if source.is_dir()
        else [source]
        if source.is_file()
        else []
    )
    if not files:
        if env("IF_NO_FILES") == "error":
            raise FakeError(
                f"No files were found with the provided path: {source}. No artifacts will be uploaded."
            )
        return print(f"No files were found with the provided path: {source}")
    store = _artifact(os.environ["GITHUB_RUN_ID"], name)
    if store.exists():
        if env("OVERWRITE") != "true":
            raise FakeError(
                "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: "
                "an artifact with this name already exists on the workflow run"
            )
        shutil.rmtree(store)
    store.mkdir(parents=True)
    for path in files:
        target = store / (path.relative_to(source) if source.is_dir() else path.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    print(f"fake upload-artifact: {name} ({len(files)} files)")


def download_artifact() -> None:
    run = env("RUN") or os.environ["GITHUB_RUN_ID"]
    if env("RUN") and not env("TOKEN"):
        raise FakeError("a run-id needs a github-token")
    store, target = _artifact(run, env("NAME", "")), Path(env("DOWNLOAD") or ".")
    if not store.is_dir():
        raise FakeError(f"Unable to download artifact(s): Artifact not found for name: {env('NAME')}")
    shutil.copytree(store, target, dirs_exist_ok=True)
    print(f"fake download-artifact: {env('NAME')} of run {run} -> {target}")


def attest() -> None:
    """Stored through the API first, then (push-to-registry) pushed with the login @sigstore/oci
    finds: ~/.docker/config.json, the first `auths` key containing the registry's host."""
    state, subject, digest = state_dir(), env("SUBJECT", ""), env("DIGEST", "")
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        raise FakeError(f"subject-digest must be sha256:<64 hex>, not {digest!r}")
    stored = state / "github" / "attestations" / digest[7:]
    stored.mkdir(parents=True, exist_ok=True)
    record = json.dumps(
        {"name": subject, "digest": digest, "predicateType": "https://slsa.dev/provenance/v1"}
    )
    (stored / f"{len(list(stored.iterdir())) + 1}.json").write_text(record)
    print(f"fake attest: provenance of {subject}@{digest} stored")
    if env("PUSH") != "true":
        return
    config, host = Path.home() / ".docker" / "config.json", subject.split("/")[0]
    if not config.is_file():
        raise FakeError(f"No credential file found at {config}")
    auths = json.loads(config.read_text()).get("auths") or {}
    key = next((k for k in auths if host in k), host)
    if key not in auths:
        raise FakeError(f"No credentials found for registry {host}")
    _, _, password = base64.b64decode(auths[key].get("auth", "")).decode().partition(":")
    if password != token(state):
        raise FakeError(f"{host}: 401 Unauthorized")
    referrers = Registry(state, subject).path / "referrers" / digest[7:]
    referrers.mkdir(parents=True, exist_ok=True)
    (referrers / f"{len(list(referrers.iterdir())) + 1}.json").write_text(record)
    print(f"fake attest: pushed beside {subject}@{digest}")


def pypi_publish() -> None:
    files = sorted(p for p in Path(env("PACKAGES") or "dist").iterdir() if p.is_file())
    if not files:
        raise FakeError("no distributions to upload")
    for path in files:
        project = re.sub(r"[-_.]+", "-", re.split(r"-\d", path.name)[0]).lower()
        stored = state_dir() / "pypi" / project / path.name
        if stored.exists():
            if env("SKIP_EXISTING") == "true":
                print(f"Skipping {path.name} because it appears to already exist")
                continue
            raise FakeError(f"HTTPError: 400 Bad Request: File already exists ('{path.name}')")
        stored.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, stored)
        if env("ATTESTATIONS") == "true":
            Path(f"{stored}.attestation.json").write_text(json.dumps({"version": 1, "file": path.name}))
        print(f"fake PyPI: uploaded {path.name}")


def record_job() -> None:
    """The rehearsal's last step of every job: reached only when every step before it
    succeeded; keeps the job's outputs for a resumed attempt (rehearsal/jobs/JOB[.INDEX].json)."""
    job, index = sys.argv[2], sys.argv[3]
    outputs = {k.removeprefix("OUT_"): v for k, v in os.environ.items() if k.startswith("OUT_")}
    folder = state_dir() / "rehearsal" / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{job}.{index or 0}.json").write_text(
        json.dumps({"outputs": outputs, "total": sys.argv[4] or "1"})
    )


def replay_outputs() -> None:
    """A job that succeeded in an earlier attempt: its outputs as that attempt made them."""
    _output(**json.loads(os.environ["REPLAY"]))


STEPS = {
    "record-job": record_job,
    "replay-outputs": replay_outputs,
    "checkout": checkout,
    "setup-python": setup_python,
    "build-push": build_push,
    "upload-artifact": upload_artifact,
    "download-artifact": download_artifact,
    "attest": attest,
    "pypi-publish": pypi_publish,
}


def main() -> int:
    try:
        STEPS[sys.argv[1]]()
    except (FakeError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as exc:
        print(f"::error::{exc} (fake {sys.argv[1]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
