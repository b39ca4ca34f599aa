"""`pip install <checkout>` leaves the checkout as it was: the build backend
(build_backend/rag_ci_build.py) builds the wheel in a copy, so no build/ nor egg-info
appears in a (possibly read-only, root-owned) checkout, and the wheel has the templates."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from builders import REPO

pytestmark = pytest.mark.slow


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _checkout(folder: Path) -> Path:
    """What a checkout of rag-ci holds for packaging (tests and docs aside)."""
    folder.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in", "rag_ci", "build_backend"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, folder / name)
    return folder


def test_building_the_wheel_writes_nothing_into_the_checkout(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    before = _files(checkout)
    # No build isolation: the test's own setuptools, no index needed (pip install does the same, isolated).
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(checkout)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert _files(checkout) == before, sorted(_files(checkout) - before)[:5]
    (wheel,) = (tmp_path / "dist").glob("rag_ci-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "rag_ci/templates/report.md.j2" in names and "rag_ci/targets/breaker.py" in names
    assert not any(n.startswith(("tests/", "build_backend/")) for n in names)


def test_the_sdist_carries_the_backend_and_builds_a_wheel_itself(tmp_path):
    checkout = _checkout(tmp_path / "rag-ci")
    sdist = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'build_backend'); import rag_ci_build; "
                            f"print(rag_ci_build.build_sdist({str(tmp_path / 'sdist')!r}))"],
                           cwd=checkout, capture_output=True, text=True, timeout=180)
    assert sdist.returncode == 0, sdist.stderr
    tarball = tmp_path / "sdist" / sdist.stdout.split()[-1]
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(tarball)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "dist").glob("rag_ci-*.whl"))
