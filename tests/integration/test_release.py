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
import zipfile
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from builders import REPO

pytestmark = pytest.mark.slow

SCRIPT = REPO / ".github" / "scripts" / "release.py"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
DIGEST = "sha256:" + "ab" * 32


def release(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def script_module():
    spec = importlib.util.spec_from_file_location("release_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_release_rehearses_on_this_machine_without_touching_the_checkout(tmp_path):
    """release.yml's order without registries: check, the release commit, the wheel stamped with
    its sha and built from it, the notes, the tags (local)."""
    before = {p.name for p in REPO.iterdir()}
    pin_before = (REPO / "rag_ci" / "templates" / "workflows" / "released-action.txt").read_text()
    done = release("rehearse", VERSION, "--dist", str(tmp_path / "dist"), "--no-isolation")
    assert done.returncode == 0, done.stderr
    wheel, sdist = f"rag_ci_gate-{VERSION}-py3-none-any.whl", f"rag_ci_gate-{VERSION}.tar.gz"
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [wheel, sdist]
    # the tag job's shallow checkout of main, the release commit fetched from the bundle
    tagged = tmp_path / "tagged"
    git = ["git", "-C", str(tagged)]
    sha = subprocess.run(
        [*git, "rev-parse", f"v{VERSION}^{{commit}}"], capture_output=True, text=True
    ).stdout.strip()
    assert (
        sha
        == subprocess.run([*git, "rev-parse", "v1^{commit}"], capture_output=True, text=True).stdout.strip()
    )
    assert (
        subprocess.run(
            [*git, "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
        ).stdout.strip()
        == "true"
    )
    pinned = subprocess.run([*git, "show", f"{sha}:action.yml"], capture_output=True, text=True).stdout
    assert (
        YAML(typ="safe").load(pinned)["runs"]["image"] == "docker://ghcr.io/rag-ci/rag-ci@sha256:" + "0" * 64
    )
    assert f"@sha256:{'0' * 64}  # v{VERSION}" in pinned
    # the wheel's `rag-ci init` pins the very commit the tags name
    stamp = (
        zipfile.ZipFile(tmp_path / "dist" / wheel)
        .read("rag_ci/templates/workflows/released-action.txt")
        .decode()
    )
    assert stamp.strip() == f"rag-ci/rag-ci@{sha} # v{VERSION}"
    notes = (tmp_path / "release-notes.md").read_text()
    assert "### Added" in notes and "## [" not in notes  # this version's section only
    assert {p.name for p in REPO.iterdir()} - before == set()  # no build/, dist/ nor egg-info
    # the checkout's pin is left as it was (the snippets' pin: a pull request after the tag moves it)
    assert (REPO / "rag_ci" / "templates" / "workflows" / "released-action.txt").read_text() == pin_before


def test_every_place_states_the_version_rag_ci_reports():
    shown = subprocess.run(
        [sys.executable, "-m", "rag_ci", "--version"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
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
    assert (
        release("pin-action", VERSION, "ghcr.io/rag-ci/rag-ci:v1", DIGEST, "--action", str(action)).returncode
        == 2
    )
    done = release("pin-action", VERSION, "ghcr.io/octo/rag-ci", DIGEST, "--action", str(action))
    assert done.returncode == 0, done.stderr
    assert (
        YAML(typ="safe").load(action.read_text())["runs"]["image"] == f"docker://ghcr.io/octo/rag-ci@{DIGEST}"
    )
    again = release("pin-action", VERSION, "ghcr.io/octo/rag-ci", DIGEST, "--action", str(action))
    assert again.returncode == 2 and "found 0" in again.stderr  # never pinned twice


def test_the_image_labels_come_from_the_dockerfile_with_the_release_values():
    module = script_module()
    labels = module.declared_labels(
        (REPO / "Dockerfile").read_text(),
        {"RAG_CI_VERSION": VERSION, "RAG_CI_SOURCE": "https://github.com/o/r", "RAG_CI_REVISION": "f" * 40},
    )
    assert labels["org.opencontainers.image.version"] == VERSION
    assert labels["org.opencontainers.image.source"] == "https://github.com/o/r"
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    done = release("labels", VERSION, "--source", "https://github.com/o/r", "--revision", "f" * 40)
    assert done.returncode == 0 and f"RAG_CI_VERSION={VERSION}" in done.stdout.split()


def test_a_version_with_a_v_is_refused():
    done = release("check", f"v{VERSION}")
    assert done.returncode == 2 and "no v" in done.stderr


def _copy_of_the_release_inputs(tmp_path: Path) -> Path:
    for name in (
        "pyproject.toml",
        "action.yml",
        "README.md",
        "CHANGELOG.md",
        ".pre-commit-hooks.yaml",
        "rag_ci/__init__.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    for folder in ("docs", "examples"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("out", "__pycache__"))
    return tmp_path


def test_a_version_bump_fails_the_check_until_every_pinned_line_follows(tmp_path):
    root = _copy_of_the_release_inputs(tmp_path)
    module = script_module()
    for name, old, new in (
        ("pyproject.toml", f'version = "{VERSION}"', 'version = "1.0.1"'),
        ("rag_ci/__init__.py", f'"{VERSION}"', '"1.0.1"'),
        ("action.yml", f"# rag-ci {VERSION}:", "# rag-ci 1.0.1:"),
        (
            "CHANGELOG.md",
            "## [Unreleased]",
            "## [Unreleased]\n\n## [1.0.1] - 2026-12-07\n\n### Fixed\n- A fix.\n",
        ),
    ):
        path = root / name
        assert old in path.read_text(), (name, old)
        path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(module.ReleaseError) as stopped:
        module.check("1.0.1", root)
    named = {place.split(":")[0] for place in str(stopped.value).split(": ", 1)[1].split("; ")}
    # the lines the old check missed: a pinned pip install, a pre-commit rev, the action's comment
    assert {
        "README.md",
        "docs/questions.md",
        "docs/sharding.md",
        ".pre-commit-hooks.yaml",
        "examples/Jenkinsfile",
        "action.yml",
    } <= named
    stale = [
        (name, line, version) for name, line, version in module.stated_versions(root) if version != "1.0.1"
    ]
    for name, line, version in stale:
        with pytest.raises(module.ReleaseError):  # one stale line left is enough to stop it
            module.check("1.0.1", root)
        path = root / name
        lines = path.read_text().splitlines(keepends=True)
        lines[line - 1] = lines[line - 1].replace(version, "1.0.1")
        path.write_text("".join(lines))
    module.check("1.0.1", root)
    assert "rag-ci-gate[anthropic,github]==1.0.1" in (root / "README.md").read_text()


@pytest.mark.parametrize(
    "line",
    [
        'pip install "rag-ci[anthropic]==1.0.0"',
        "      - run: pip install rag-ci",
        "pipx run rag-ci demo",
        "uvx rag_ci demo",
        "pip install ragci",
    ],
)
def test_a_document_that_installs_another_distribution_stops_the_release(tmp_path, line):
    root = _copy_of_the_release_inputs(tmp_path)
    (root / "docs" / "extra.md").write_text(f"Install it:\n\n    {line}\n")
    module = script_module()
    with pytest.raises(module.ReleaseError, match=r"docs/extra\.md:3 installs 'rag[-_]?ci'"):
        module.check(VERSION, root)


def test_the_install_lines_of_the_documents_name_the_distribution_the_project_owns():
    module = script_module()
    assert (
        tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"]
        == module.DISTRIBUTION
        == "rag-ci-gate"
    )
    assert module.wrong_installs(REPO) == []
    assert module.installed_names("uvx --from rag-ci-gate rag-ci demo") == ["rag-ci-gate"]
    assert module.installed_names("pipx run rag-ci-gate demo") == ["rag-ci-gate"]


PULL = REPO / ".github" / "scripts" / "pull_anonymously.py"


def pull(image: str, digest: str) -> subprocess.CompletedProcess:
    # no docker config, no token in sight
    return subprocess.run(
        [sys.executable, str(PULL), image, digest, "--insecure-http"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )


def test_the_pushed_image_is_pulled_without_credentials_when_the_package_is_public():
    from fakes.fake_registry import FakeRegistry

    with FakeRegistry("rag-ci/rag-ci") as registry:
        done = pull(f"{registry.host}/rag-ci/rag-ci", registry.digest)
    assert done.returncode == 0, done.stderr
    assert "pulled without credentials" in done.stdout
    assert [path for path, _ in registry.requests] == [
        "/v2/rag-ci/rag-ci/manifests/" + registry.digest,
        "/token",
        "/v2/rag-ci/rag-ci/manifests/" + registry.digest,
    ]
    assert not any(basic for _, basic in registry.requests)


@pytest.mark.parametrize("refuse", ["token", "manifest"])
def test_a_private_package_fails_the_pull_naming_the_one_time_setting(refuse):
    from fakes.fake_registry import FakeRegistry

    with FakeRegistry("rag-ci/rag-ci", refuse=refuse) as registry:
        done = pull(f"{registry.host}/rag-ci/rag-ci", registry.digest)
    assert done.returncode == 2
    assert (
        done.stderr.count("\n") == 1
        and "refuses anonymous pulls" in done.stderr
        and "visibility of package rag-ci/rag-ci" in done.stderr
    )
    assert "Traceback" not in done.stderr
    spec = importlib.util.spec_from_file_location("pull_script", PULL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "github.com/users/octo/packages/container/package/rag-ci/settings" in str(
        module.private_package("ghcr.io/octo/rag-ci", 403)
    )


def test_the_pull_refuses_another_digest_and_a_tag():
    from fakes.fake_registry import FakeRegistry

    with FakeRegistry("rag-ci/rag-ci") as registry:
        other = pull(f"{registry.host}/rag-ci/rag-ci", "sha256:" + "f" * 64)
        tag = pull(f"{registry.host}/rag-ci/rag-ci", "v1")
    assert other.returncode == 2 and "refuses anonymous pulls (HTTP 404)" in other.stderr
    assert tag.returncode == 2 and "not an image digest" in tag.stderr


def test_a_version_in_other_digits_than_ascii_is_refused():
    module = script_module()
    for version in ("1.2.\u0663", "\u0661.0.0", "1.\uff10.0"):  # Arabic-Indic three and one, fullwidth zero
        with pytest.raises(module.ReleaseError, match="version must look like 1.2.3"):
            module.version_of(version)
    assert module.version_of("1.2.3") == "1.2.3"
