"""The release as a job graph: a failure at each job leaves nothing public that points at
something missing, and "Re-run failed jobs" completes it (.github/scripts/rehearse_jobs.py, run
on the real release.yml); every byte PyPI and the GitHub Release get is the one build made
(.github/scripts/release_files.py); the attestation finds the registry login where it reads it."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from builders import REPO

SCRIPTS = REPO / ".github" / "scripts"
RELEASE = REPO / ".github" / "workflows" / "release.yml"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


rehearse_jobs = script("rehearse_jobs")
release_files = script("release_files")


def jobs() -> dict:
    return YAML(typ="safe").load(RELEASE.read_text())["jobs"]


def rehearse(tmp_path: Path, edited: dict) -> list[str]:
    path = tmp_path / "release.yml"
    yaml = YAML()
    with path.open("w") as stream:
        yaml.dump({"name": "release", "jobs": edited}, stream)
    return [line for ok, line in rehearse_jobs.rehearse(path) if not ok]


def test_a_failure_at_each_job_leaves_nothing_dangling_and_a_rerun_completes():
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "rehearse_jobs.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    for name in jobs():
        assert any(line.startswith(f"ok   {name} fails") for line in lines), name
    assert all(line.startswith("ok") and line.endswith("resumed: completes") for line in lines)
    assert lines[0] == (
        "ok   package private at first: public after the failure: attestation, image; resumed: completes"
    )
    # PyPI's version exists only once the commit its wheel pins is tagged
    assert "public after the failure: attestation, image, tags; resumed" in done.stdout
    assert not any("pypi" in line.split("resumed")[0] and "tags" not in line for line in lines)


def test_the_order_that_published_pypi_first_is_caught(tmp_path):
    edited = jobs()
    edited["pypi"]["needs"] = ["build", "test-image"]
    edited["push-image"]["needs"] = ["build", "pypi"]
    edited["tag"]["needs"] = ["build", "pull-check"]
    edited["github-release"]["needs"] = ["build", "tag"]
    failures = rehearse(tmp_path, edited)
    assert failures and all("REFERS TO WHAT IS NOT PUBLIC: pypi -> tags" in line for line in failures)
    assert any(line.startswith("FAIL package private at first") for line in failures)


def test_an_upload_that_cannot_run_twice_leaves_the_resumed_run_stuck(tmp_path):
    edited = jobs()
    publish = next(s for s in edited["pypi"]["steps"] if s.get("uses", "").startswith("pypa/"))
    del publish["with"]["skip-existing"]
    [failure] = rehearse(tmp_path, edited)
    assert (
        failure.startswith("FAIL pypi fails after its public step")
        and "stuck at github-release, pypi" in failure
    )


def test_the_release_is_cut_from_the_default_branch_only():
    first = jobs()["build"]["steps"][0]
    assert '"$GITHUB_REF" != "refs/heads/$DEFAULT_BRANCH"' in first["run"] and "exit 1" in first["run"]
    assert first["env"]["DEFAULT_BRANCH"] == "${{ github.event.repository.default_branch }}"


def test_every_artifact_is_read_by_run_id_and_kept_long_enough_to_resume():
    steps = [step for job in jobs().values() for step in job["steps"]]
    downloads = [s for s in steps if s.get("uses", "").startswith("actions/download-artifact@")]
    uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert downloads and all(
        s["with"]["run-id"] == "${{ github.run_id }}" and s["with"]["github-token"] for s in downloads
    )
    assert uploads and all(s["with"]["retention-days"] >= 30 for s in uploads)
    for name, job in jobs().items():
        if any(s in downloads for s in job["steps"]):
            assert job["permissions"].get("actions") == "read", name


def test_pypi_and_the_github_release_check_every_byte_against_builds_output():
    release = jobs()
    assert "release_files.py sums dist" in "".join(s.get("run", "") for s in release["build"]["steps"])
    assert release["build"]["outputs"]["sums"] == "${{ steps.commit.outputs.sums }}"
    for name in ("pypi", "github-release"):
        runs = "".join(s.get("run", "") for s in release[name]["steps"])
        assert release[name]["env"]["SUMS"] == "${{ needs.build.outputs.sums }}"
        assert "sha256sum --strict --check" in runs, name
    upload = "".join(s.get("run", "") for s in release["github-release"]["steps"])
    assert "/dist/*" in upload and "SHA256SUMS" in upload and "sbom-*.spdx.json" in upload


def test_the_attestation_reads_the_login_that_the_push_step_wrote():
    push = jobs()["push-image"]["steps"]
    login = next(s for s in push if "skopeo login" in s.get("run", ""))["run"]
    assert 'auth="$HOME/.docker/config.json"' in login and '--authfile "$auth"' in login
    assert login.index("release_files.py docker-auth") < login.index("skopeo copy")
    names = [s.get("uses", s.get("name", "")) for s in push]
    attest = next(i for i, n in enumerate(names) if n.startswith("actions/attest-build-provenance@"))
    logout = push[attest + 1]
    assert logout["if"] == "${{ always() }}" and "skopeo logout" in logout["run"]
    assert "skopeo logout" not in login  # logged in until the attestation has pushed


def sums_of(dist: Path) -> str:
    return release_files.sums(dist)


@pytest.fixture
def dist(tmp_path):
    folder = tmp_path / "dist"
    folder.mkdir()
    (folder / "rag_ci_gate-1.0.0-py3-none-any.whl").write_bytes(b"wheel bytes")
    (folder / "rag_ci_gate-1.0.0.tar.gz").write_bytes(b"sdist bytes")
    return folder


def test_the_checksums_hold_exactly_the_files_build_made(dist, tmp_path):
    text = sums_of(dist)
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(text)
    assert text.splitlines()[0].endswith("  rag_ci_gate-1.0.0-py3-none-any.whl")
    checked = subprocess.run(["sha256sum", "--strict", "--check", str(sums)], cwd=dist, capture_output=True)
    assert checked.returncode == 0, checked.stdout  # the format the workflow's sha256sum reads
    assert release_files.verify(dist, text) == sorted(p.name for p in dist.iterdir())
    (dist / "rag_ci_gate-1.0.0.tar.gz").write_bytes(b"sdist bytes, changed")
    with pytest.raises(release_files.ReleaseFileError, match="not the file build made"):
        release_files.verify(dist, text)
    (dist / "rag_ci_gate-1.0.0.tar.gz").write_bytes(b"sdist bytes")
    (dist / "extra-1.0.0.tar.gz").write_bytes(b"")
    with pytest.raises(release_files.ReleaseFileError, match="build made"):
        release_files.verify(dist, text)


def test_a_dist_folder_without_one_sdist_and_one_wheel_is_refused(dist):
    (dist / "rag_ci_gate-1.0.0.tar.gz").unlink()
    with pytest.raises(release_files.ReleaseFileError, match="one sdist and one wheel"):
        sums_of(dist)


def _oci_archive(path: Path, with_sbom: bool = True) -> None:
    """An OCI archive shaped as BuildKit writes one with `sbom: true`: an index naming the image's
    index, which holds a manifest per platform and an attestation manifest beside each."""
    blobs: dict[str, bytes] = {}

    def blob(document) -> dict:
        data = json.dumps(document).encode() if not isinstance(document, bytes) else document
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"digest": digest, "size": len(data)}

    manifests = []
    for arch in ("amd64", "arm64"):
        image = {**blob({"layers": [], "arch": arch}), "platform": {"os": "linux", "architecture": arch}}
        statement = {
            "predicateType": release_files.SPDX,
            "predicate": {"spdxVersion": "SPDX-2.3", "name": arch},
        }
        annotations = {
            "in-toto.io/predicate-type": release_files.SPDX
            if with_sbom
            else "https://slsa.dev/provenance/v0.2"
        }
        attestation = blob({"layers": [{**blob(statement), "annotations": annotations}]})
        attestation["annotations"] = {
            "vnd.docker.reference.type": "attestation-manifest",
            "vnd.docker.reference.digest": image["digest"],
        }
        manifests += [image, attestation]
    top = {"manifests": [blob({"manifests": manifests})]}
    with tarfile.open(path, "w") as archive:
        for name, data in [("index.json", json.dumps(top).encode())] + [
            (f"blobs/sha256/{d.split(':')[1]}", b) for d, b in blobs.items()
        ]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_each_platforms_sbom_is_taken_from_the_image_archive(tmp_path):
    _oci_archive(tmp_path / "image.tar")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPTS / "release_files.py"),
            "sbom",
            str(tmp_path / "image.tar"),
            "--output-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    for arch in ("amd64", "arm64"):
        document = json.loads((tmp_path / f"sbom-linux-{arch}.spdx.json").read_text())
        assert document == {"spdxVersion": "SPDX-2.3", "name": arch}


def test_an_archive_without_an_sbom_stops_the_release(tmp_path):
    _oci_archive(tmp_path / "image.tar", with_sbom=False)
    with pytest.raises(release_files.ReleaseFileError, match="no SPDX attestation"):
        release_files.sboms(tmp_path / "image.tar")


def _login(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def test_the_login_is_found_where_the_attestation_reads_it(tmp_path):
    config = tmp_path / ".docker" / "config.json"
    config.parent.mkdir()
    # skopeo login --authfile writes the containers' auth.json format, which is Docker's
    config.write_text(json.dumps({"auths": {"ghcr.io": {"auth": _login("release-bot", "token")}}}))
    assert release_files.docker_login(config, "ghcr.io") == ("release-bot", "token")


@pytest.mark.parametrize(
    "content, error",
    [
        (None, "no credentials file"),
        ({"credsStore": "desktop"}, "holds no login for ghcr.io"),
        ({"auths": {"docker.io": {"auth": _login("u", "p")}}}, "holds no login for ghcr.io"),
        ({"auths": {"ghcr.io": {"auth": "not base64!"}}}, "not base64 of user:password"),
    ],
)
def test_a_login_the_attestation_could_not_read_is_refused_before_the_push(tmp_path, content, error):
    config = tmp_path / "config.json"
    if content is not None:
        config.write_text(json.dumps(content))
    with pytest.raises(release_files.ReleaseFileError, match=error):
        release_files.docker_login(config, "ghcr.io")


def test_the_workflows_and_what_they_run_have_code_owners():
    owners = {
        line.split()[0]: line.split()[1:]
        for line in (REPO / ".github" / "CODEOWNERS").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for path in ("/.github/", "/action.yml", "/Dockerfile", "/requirements/"):
        assert owners.get(path), path
