"""rag-ci's PEP 517 build backend: setuptools, run on a copy of the sources.

`pip install <checkout>` builds the wheel in the source tree with setuptools, which leaves
`build/` and `rag_ci.egg-info/` in the checkout (a read-only or root-owned one fails, and
a stale `build/lib` can leak old modules into a later wheel). Here the wheel, the sdist
and their metadata are built in a temporary copy of what the package is made of, so the
checkout stays as it was. Editable installs (`pip install -e .`) keep setuptools' own
behaviour: they point at the checkout on purpose.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401 - the editable interface (PEP 660), unchanged
    build_editable,
    get_requires_for_build_editable,
    prepare_metadata_for_build_editable,
)

# Everything the package is built from; the backend and MANIFEST.in so that the sdist builds as well.
SOURCES = ("pyproject.toml", "README.md", "MANIFEST.in", "rag_ci", "build_backend")


@contextlib.contextmanager
def _in_a_copy() -> Iterator[None]:
    root = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="rag-ci-build-") as tmp:
        for name in SOURCES:
            source = root / name
            if source.is_dir():
                shutil.copytree(source, Path(tmp) / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
            else:
                shutil.copy2(source, Path(tmp) / name)
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(root)


def get_requires_for_build_wheel(config_settings=None):
    with _in_a_copy():  # setuptools runs egg_info to answer: in the tree, that writes rag_ci.egg-info/
        return _setuptools.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings=None):
    with _in_a_copy():
        return _setuptools.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    metadata_directory = os.path.abspath(metadata_directory)
    with _in_a_copy():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory = os.path.abspath(wheel_directory)
    with _in_a_copy():
        return _setuptools.build_wheel(wheel_directory, config_settings, None)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = os.path.abspath(sdist_directory)
    with _in_a_copy():
        return _setuptools.build_sdist(sdist_directory, config_settings)
