"""Packaging with hatchling: `pip install <checkout>` leaves the
checkout as it was (no build/ nor egg-info in a possibly read-only, root-owned checkout), the
wheel carries every data file of the package (templates, JSON Schemas), the sdist builds a
wheel itself, and `pip install -e` (the README's first command) points at the checkout."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from builders import REPO

pytestmark = pytest.mark.slow

# What a checkout of rag-ci holds for packaging (tests and docs aside).
PACKAGED = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "SECURITY.md", "rag_ci", "examples")


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _checkout(folder: Path) -> Path:
    folder.mkdir()
    for name in PACKAGED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(
                source,
                folder / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".index", "out"),
            )
        else:
            shutil.copy2(source, folder / name)
    return folder


def _pip(*args: str, cwd: Path | None = None) -> None:
    # No build isolation: the test's own hatchling, no index needed (pip install does the same, isolated).
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--no-deps", "--no-build-isolation", "-q"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr


def _data_files(root: Path) -> set[str]:
    """The package's files that are not Python: what setuptools would have dropped without package-data."""
    return {
        p.relative_to(root).as_posix()
        for p in (root / "rag_ci").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }


def test_pip_install_of_a_checkout_writes_nothing_into_it(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    before = _files(checkout)
    _pip("install", "--target", str(tmp_path / "site"), str(checkout))
    assert _files(checkout) == before, sorted(_files(checkout) - before)[:5]
    assert (tmp_path / "site" / "rag_ci" / "templates" / "report.md.j2").is_file()


def test_the_wheel_holds_every_data_file_of_the_package_and_nothing_else(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    _pip("wheel", "-w", str(tmp_path / "dist"), str(checkout))
    (wheel,) = (tmp_path / "dist").glob("rag_ci_gate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"rag_ci/templates/report.md.j2", "rag_ci/targets/breaker.py"} <= names
    assert "rag_ci/templates/workflows/rag-ci-pr.yml" in names  # `rag-ci init` writes them
    assert "rag_ci/schemas/rag-ci.schema.json" in names  # `rag-ci schema`, the editor's $schema
    assert _data_files(checkout) <= names, sorted(_data_files(checkout) - names)
    assert not any(n.startswith(("tests/", "docs/", "examples/")) or "__pycache__" in n for n in names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_sdist_builds_a_wheel_itself(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--sdist",
            "--no-isolation",
            "-o",
            str(tmp_path / "sdist"),
            str(checkout),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    (tarball,) = (tmp_path / "sdist").glob("rag_ci_gate-*.tar.gz")
    members = {name.split("/", 1)[1] for name in tarfile.open(tarball).getnames() if "/" in name}
    assert {
        "LICENSE",
        "CHANGELOG.md",
        "SECURITY.md",
        "pyproject.toml",
        "rag_ci/templates/report.md.j2",
    } <= members
    _pip("wheel", "-w", str(tmp_path / "dist"), str(tarball))
    assert list((tmp_path / "dist").glob("rag_ci_gate-*.whl"))


def test_an_editable_install_points_at_the_checkout_and_writes_nothing_into_it(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    before = _files(checkout)
    installed = _installed_rag_ci()
    # --target, never --prefix: pip uninstalls the running environment's rag-ci before a
    # --prefix install, which left the README's venv without its `rag-ci` command.
    _pip("install", "--target", str(tmp_path / "site"), "-e", str(checkout))
    assert _files(checkout) == before, sorted(_files(checkout) - before)[:5]
    # -S: only the install's own .pth files are read (not the environment's rag-ci).
    where = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            f"import site; site.addsitedir({str(tmp_path / 'site')!r}); import rag_ci; print(rag_ci.__file__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip() == str(checkout / "rag_ci" / "__init__.py"), where.stderr
    assert site  # the same mechanism the interpreter uses for site-packages
    assert _installed_rag_ci() == installed  # the environment running the tests keeps its own install


def _installed_rag_ci() -> str | None:
    """The rag-ci distribution installed where the tests run (None: not installed, e.g. a bare checkout)."""
    found = subprocess.run(
        [sys.executable, "-I", "-c", "import importlib.metadata as m; print(m.version('rag-ci'))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return found.stdout.strip() if found.returncode == 0 else None
