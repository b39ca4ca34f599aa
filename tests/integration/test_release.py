"""The release, rehearsed on this machine: everything .github/workflows/release.yml
does but the pushes, by the script it calls (.github/scripts/release.py): every place states
one version, the sdist and the wheel build and pass `twine check`, the wheel holds the
package's data files, the image's labels are declared, action.yml is rewritten to run an
image by digest, and the notes come from CHANGELOG.md."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from builders import REPO

pytestmark = pytest.mark.slow

SCRIPT = REPO / ".github" / "scripts" / "release.py"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
DIGEST = "sha256:" + "ab" * 32


def release(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def script_module():
    spec = importlib.util.spec_from_file_location("release_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_release_rehearses_on_this_machine_without_touching_the_checkout(tmp_path):
    before = {p.name for p in REPO.iterdir()}
    done = release("rehearse", VERSION, "--dist", str(tmp_path / "dist"), "--no-isolation")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [f"rag_ci-{VERSION}-py3-none-any.whl", f"rag_ci-{VERSION}.tar.gz"]
    pinned = (tmp_path / "action.yml").read_text()
    assert YAML(typ="safe").load(pinned)["runs"]["image"] == "docker://ghcr.io/rag-ci/rag-ci@sha256:" + "0" * 64
    assert f"@sha256:{'0' * 64}  # v{VERSION}" in pinned
    notes = (tmp_path / "release-notes.md").read_text()
    assert "### Added" in notes and "## [" not in notes  # this version's section only
    assert {p.name for p in REPO.iterdir()} - before == set()  # no build/, dist/ nor egg-info


def test_every_place_states_the_version_rag_ci_reports():
    shown = subprocess.run([sys.executable, "-m", "rag_ci", "--version"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert shown.stdout.strip().endswith(VERSION), shown.stdout + shown.stderr
    assert VERSION == "1.0.0"
    done = release("check", VERSION)
    assert done.returncode == 0, done.stderr
    assert any(name == "README.md" for name, _, _ in script_module().stated_versions(REPO))


def test_a_place_that_states_another_version_stops_the_release(tmp_path):
    for name in ("pyproject.toml", "action.yml", "README.md", "CHANGELOG.md"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "rag_ci").mkdir()
    shutil.copy(REPO / "rag_ci" / "__init__.py", tmp_path / "rag_ci" / "__init__.py")
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text().replace(f"rag-ci:v{VERSION}", "rag-ci:v0.9.0", 1))
    module = script_module()
    with pytest.raises(module.ReleaseError, match=r"README\.md:\d+ says 0\.9\.0"):
        module.check(VERSION, tmp_path)
    with pytest.raises(module.ReleaseError, match="CHANGELOG.md has no section"):
        module.notes("9.9.9", tmp_path)


def test_pinning_action_yml_takes_a_digest_and_nothing_else(tmp_path):
    action = tmp_path / "action.yml"
    shutil.copy(REPO / "action.yml", action)
    bad = release("pin-action", VERSION, "ghcr.io/rag-ci/rag-ci", "v1.0.0", "--action", str(action))
    assert bad.returncode == 2 and "not an image digest" in bad.stderr
    assert release("pin-action", VERSION, "ghcr.io/rag-ci/rag-ci:v1", DIGEST, "--action", str(action)).returncode == 2
    done = release("pin-action", VERSION, "ghcr.io/octo/rag-ci", DIGEST, "--action", str(action))
    assert done.returncode == 0, done.stderr
    assert YAML(typ="safe").load(action.read_text())["runs"]["image"] == f"docker://ghcr.io/octo/rag-ci@{DIGEST}"
    again = release("pin-action", VERSION, "ghcr.io/octo/rag-ci", DIGEST, "--action", str(action))
    assert again.returncode == 2 and "found 0" in again.stderr  # never pinned twice


def test_the_image_labels_come_from_the_dockerfile_with_the_release_values():
    module = script_module()
    labels = module.declared_labels((REPO / "Dockerfile").read_text(), {"RAG_CI_VERSION": VERSION, "RAG_CI_SOURCE": "https://github.com/o/r",
                                                                         "RAG_CI_REVISION": "f" * 40})
    assert labels["org.opencontainers.image.version"] == VERSION
    assert labels["org.opencontainers.image.source"] == "https://github.com/o/r"
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    done = release("labels", VERSION, "--source", "https://github.com/o/r", "--revision", "f" * 40)
    assert done.returncode == 0 and f"RAG_CI_VERSION={VERSION}" in done.stdout.split()


def test_a_version_with_a_v_is_refused():
    done = release("check", f"v{VERSION}")
    assert done.returncode == 2 and "no v" in done.stderr


def test_a_version_in_other_digits_than_ascii_is_refused():
    module = script_module()
    for version in ("1.2.\u0663", "\u0661.0.0", "1.\uff10.0"):  # Arabic-Indic three and one, fullwidth zero
        with pytest.raises(module.ReleaseError, match="version must look like 1.2.3"):
            module.version_of(version)
    assert module.version_of("1.2.3") == "1.2.3"
