"""The layers stay honest: import-linter's contracts in pyproject.toml hold.

The pure core imports no adapter; targets, judges and GitHub never import each other;
the engine never imports GitHub; nothing imports the faces (cli, action).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from builders import REPO


def test_the_import_contracts_in_pyproject_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    assert lint_imports, "import-linter is a dev dependency: pip install -e '.[dev]'"
    done = subprocess.run([lint_imports, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
