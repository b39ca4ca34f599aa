"""Driving rag-ci's static pages in headless Chromium with playwright-core (the npm package, no bundled browser).

Needs Chromium (/usr/bin/chromium, or $CHROMIUM) and Node. playwright-core is installed once
into a cache folder ($RAG_CI_TEST_CACHE, default ~/.cache/rag-ci-tests), bounded in time;
every missing piece skips the test with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def playwright_folder() -> Path:
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        pytest.skip(f"no Chromium at {chromium} (apt-get install -y chromium, or set $CHROMIUM)")
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("Node.js and npm are needed to drive Chromium with playwright-core")
    cache = Path(os.environ.get("RAG_CI_TEST_CACHE", Path.home() / ".cache" / "rag-ci-tests")) / "playwright"
    if not (cache / "node_modules" / "playwright-core").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(cache),
                    "--no-audit",
                    "--no-fund",
                    "--silent",
                    "playwright-core@1",
                ],
                check=True,
                timeout=180,
                capture_output=True,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"could not install playwright-core from npm into {cache}: {exc}")
    return cache
