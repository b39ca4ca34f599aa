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
import re
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


# --- the pin users copy (.github/scripts/release_pins.py and release.yml's pin-snippets job) ---

release_pins = script("release_pins")
PIN_SHA = "89abcdef0123456789abcdef0123456789abcdef"


def test_the_pin_pull_request_comes_after_the_tags_and_a_rerun_resumes_it():
    lines = [line for ok, line in rehearse_jobs.rehearse(RELEASE)]
    assert any(line.startswith("ok   pin-snippets fails after its public step") for line in lines)
    # never public before the commit it pins is tagged
    assert not any("pin pull request" in line.split("resumed")[0] and "tags" not in line for line in lines)


def test_a_pin_pull_request_before_the_tags_is_caught(tmp_path):
    edited = jobs()
    edited["pin-snippets"]["needs"] = ["build"]
    failures = rehearse(tmp_path, edited)
    assert failures and any("pin pull request -> tags" in line for line in failures)


def test_a_pin_job_that_does_not_look_for_its_pull_request_cannot_resume(tmp_path):
    edited = jobs()
    step = next(s for s in edited["pin-snippets"]["steps"] if "gh pr create" in s.get("run", ""))
    step["run"] = step["run"].replace("gh pr list", "true")
    [failure] = rehearse(tmp_path, edited)
    assert (
        failure.startswith("FAIL pin-snippets fails after its public step")
        and "stuck at pin-snippets" in failure
    )


def test_the_script_and_init_accept_the_same_pins():
    from rag_ci.cli.init_workflows import PIN

    sha = "0" * 40
    for text, accepted in [
        (f"rag-ci/rag-ci@{sha} # v1.2.3", True),
        (f"rag-ci/rag-ci@{sha} # main (before v1.0.0)", True),
        (f"octo/rag-ci@{sha} # v10.0.1", True),
        ("rag-ci/rag-ci@v1", False),
        (f"rag-ci/rag-ci@{sha}", False),
        (f"rag-ci/rag-ci@{sha[:-1]} # v1.2.3", False),
        (f"rag-ci/rag-ci@{sha} # v1.2", False),
        (f"rag-ci/rag-ci@{sha} # main", False),
        ("unreleased", False),
    ]:
        assert bool(PIN.fullmatch(text)) is accepted is bool(release_pins.PIN.fullmatch(text)), text


def test_every_snippet_carries_the_files_pin():
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "release_pins.py"), "check-snippets"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert re.match(r"release: (\d+) snippets pin rag-ci/rag-ci@[0-9a-f]{40} # ", done.stdout)
    assert int(done.stdout.split()[1]) >= 11


def _clone(tmp_path: Path) -> Path:
    """This repository's committed tree, as the release's checkout holds it."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    return clone


def test_pinning_rewrites_the_file_and_every_snippet_and_no_workflow_file(tmp_path):
    clone = _clone(tmp_path)
    pin = f"rag-ci/rag-ci@{PIN_SHA} # v1.0.0"
    changed = release_pins.pin_snippets(pin, clone)
    git = ["git", "-C", str(clone)]
    touched = subprocess.run([*git, "diff", "--name-only"], capture_output=True, text=True).stdout.split()
    assert sorted(touched) == changed and "README.md" in changed and "docs/action.md" in changed
    # a job token may push none of these: .github/workflows/ is left as it was
    assert not [name for name in touched if name.startswith(".github/")]
    assert (clone / release_pins.PIN_FILE).read_text() == pin + "\n"
    assert len(release_pins.check_snippets(clone)) >= 11
    assert f"uses: {pin}\n" in (clone / "README.md").read_text()
    # the pin is all a line changes: every changed line is a `uses:` that now names the pin
    diff = subprocess.run([*git, "diff", "-U0"], capture_output=True, text=True).stdout
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added and all(line.endswith(pin) for line in added)


def test_a_snippet_that_is_not_the_files_pin_is_named_by_file_and_line(tmp_path):
    clone = _clone(tmp_path)
    readme = clone / "README.md"
    lines = readme.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if "uses: rag-ci/rag-ci@" in line)
    lines[number - 1] = "      - uses: rag-ci/rag-ci@v1\n"
    readme.write_text("".join(lines))
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "release_pins.py"), "check-snippets", "--root", str(clone)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert f"README.md:{number} pins 'rag-ci/rag-ci@v1'" in done.stderr
    assert done.stderr.count(" pins '") == 1  # the others are right


def _tags(tmp_path: Path, tagged: dict[str, str]) -> str:
    """`git ls-remote --tags` of a repository whose vX.Y.Z tags are annotated (as the tag job
    makes them) and whose vX tag is not: the text the build step passes with --tags."""
    origin = tmp_path / "origin"
    git = ["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    commits = {}
    for version in tagged:
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", version], check=True)
        commits[version] = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        subprocess.run([*git, "tag", "-a", f"v{version}", "-m", version], check=True)
        subprocess.run([*git, "tag", "-f", f"v{version.split('.')[0]}"], check=True, capture_output=True)
    tagged.update(commits)
    return subprocess.run(
        ["git", "ls-remote", "--tags", str(origin), "refs/tags/v*"], capture_output=True, text=True
    ).stdout


def test_the_next_release_waits_for_the_previous_ones_pin_pull_request(tmp_path):
    clone = _clone(tmp_path)
    commits = {"1.0.0": "", "1.1.0": ""}
    ls_remote = _tags(tmp_path, commits)
    assert release_pins.release_commits(ls_remote) == commits  # the commits, not the tag objects
    # the first release: no tag yet, the pin may name main
    assert release_pins.check_previous_release("1.0.0", "", clone) is None
    # 1.2.0 after 1.1.0, whose pin pull request is not merged: refused, saying what to merge
    release_pins.pin_snippets(f"rag-ci/rag-ci@{commits['1.0.0']} # v1.0.0", clone)
    with pytest.raises(release_pins.PinError, match=r"not v1\.1\.0's commit .*release-pins/v1\.1\.0"):
        release_pins.check_previous_release("1.2.0", ls_remote, clone)
    # the right commit under another version's label is refused too
    release_pins.pin_snippets(f"rag-ci/rag-ci@{commits['1.1.0']} # v1.0.0", clone)
    with pytest.raises(release_pins.PinError, match="release-pins/v1.1.0"):
        release_pins.check_previous_release("1.2.0", ls_remote, clone)
    release_pins.pin_snippets(f"rag-ci/rag-ci@{commits['1.1.0']} # v1.1.0", clone)
    assert release_pins.check_previous_release("1.2.0", ls_remote, clone) == "1.1.0"
    # a new run that finds its own version tagged already compares with the one before it
    release_pins.pin_snippets(f"rag-ci/rag-ci@{commits['1.0.0']} # v1.0.0", clone)
    assert release_pins.check_previous_release("1.1.0", ls_remote, clone) == "1.0.0"
    with pytest.raises(release_pins.PinError, match="not v1.1.0's commit"):
        release_pins.check_previous_release("1.0.1", ls_remote, clone)  # the newest, not the one below


# A fake of the GitHub CLI (the outer edge): pull requests are lines `number head base` in the
# file $FAKE_GH_PULLS; `pr create` fails once while the file $FAKE_GH_FAIL_ONCE exists.
FAKE_GH = r"""#!/bin/sh
verb="$1 $2"; shift 2
head=""; base=""
while [ $# -gt 0 ]; do
  case "$1" in --head) head="$2"; shift ;; --base) base="$2"; shift ;; esac
  shift
done
touch "$FAKE_GH_PULLS"
case "$verb" in
  "pr list") awk -v h="$head" '$2 == h { print $1 }' "$FAKE_GH_PULLS" ;;
  "pr create")
    if [ -e "$FAKE_GH_FAIL_ONCE" ]; then rm "$FAKE_GH_FAIL_ONCE"; echo "HTTP 502" >&2; exit 1; fi
    echo "$(($(wc -l < "$FAKE_GH_PULLS") + 1)) $head $base" >> "$FAKE_GH_PULLS"
    echo "https://github.com/rag-ci/rag-ci/pull/1" ;;
  *) echo "fake gh: $verb not faked" >&2; exit 3 ;;
esac
"""


def _pin_job_attempt(tmp_path: Path, origin: Path, attempt: int) -> subprocess.CompletedProcess:
    """The pin-snippets job's step, as a fresh runner runs it: a checkout of origin, the fake gh."""
    checkout = tmp_path / f"checkout-{attempt}"
    subprocess.run(["git", "clone", "-q", str(origin), str(checkout)], check=True)
    [step] = [s for s in jobs()["pin-snippets"]["steps"] if "run" in s]
    env = {
        "PATH": f"{tmp_path / 'bin'}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITHUB_REPOSITORY": "rag-ci/rag-ci",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_TOKEN": "job-token",
        "GH_TOKEN": "job-token",
        "VERSION": "1.0.0",
        "SHA": PIN_SHA,
        "DEFAULT_BRANCH": "main",
        "FAKE_GH_PULLS": str(tmp_path / "pulls"),
        "FAKE_GH_FAIL_ONCE": str(tmp_path / "fail-once"),
    }
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_pin_job_pushes_its_branch_opens_one_pull_request_and_resumes(tmp_path):
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(REPO), str(origin)], check=True)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "gh").write_text(FAKE_GH)
    (tmp_path / "bin" / "gh").chmod(0o755)
    (tmp_path / "fail-once").touch()  # the first attempt fails after its push
    branch = "refs/heads/release-pins/v1.0.0"

    def pushed() -> str:
        done = subprocess.run(["git", "-C", str(origin), "rev-parse", branch], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    first = _pin_job_attempt(tmp_path, origin, 1)
    assert first.returncode != 0 and "HTTP 502" in first.stderr
    commit = pushed()
    assert commit and not (tmp_path / "pulls").read_text()
    second = _pin_job_attempt(tmp_path, origin, 2)  # "Re-run failed jobs"
    assert second.returncode == 0, second.stderr
    assert pushed() == commit  # the branch was kept, not pinned and pushed again
    assert (tmp_path / "pulls").read_text() == "1 release-pins/v1.0.0 main\n"
    third = _pin_job_attempt(tmp_path, origin, 3)
    assert third.returncode == 0 and "the pull request of release-pins/v1.0.0 exists" in third.stdout
    assert (tmp_path / "pulls").read_text().count("\n") == 1
    # what the pull request holds: the pin, in the file and every snippet, no workflow file
    git = ["git", "-C", str(origin)]
    names = subprocess.run(
        [*git, "diff", "--name-only", f"{commit}^", commit], capture_output=True, text=True
    ).stdout.split()
    assert "rag_ci/templates/workflows/released-action.txt" in names and "README.md" in names
    assert not [name for name in names if name.startswith(".github/")]
    pin = subprocess.run(
        [*git, "show", f"{commit}:rag_ci/templates/workflows/released-action.txt"],
        capture_output=True,
        text=True,
    ).stdout
    assert pin == f"rag-ci/rag-ci@{PIN_SHA} # v1.0.0\n"


def test_the_version_check_leaves_the_pin_to_the_pin_check(tmp_path):
    """Released 1.0.0, its pin pull request merged: the snippets say `# v1.0.0` while 1.1.0 is
    prepared, and only release_pins.py judges them; the image digest's comment is still read."""
    release = script("release")
    clone = _clone(tmp_path)
    release_pins.pin_snippets(f"rag-ci/rag-ci@{PIN_SHA} # v0.9.0", clone)
    stated = release.stated_versions(clone)
    assert not [place for place in stated if place[2] == "0.9.0"]
    action = (clone / "action.yml").read_text().splitlines()
    assert any(name == "action.yml" and "rag-ci@sha256:" in action[line - 1] for name, line, _ in stated)
