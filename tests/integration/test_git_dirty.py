"""results.json records whether the checkout had uncommitted changes beside its git sha:
`meta.git_dirty`, False on a clean commit, True with a modified tracked file,
None outside git. The results written into the checkout (untracked) do not make it dirty."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
TARGET = f"target:\n  kind: python\n  entry: tiny_rag:answer\n  path: [{FAKES}]\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _meta(config: Path, output: Path) -> dict:
    result = CliRunner().invoke(
        cli, ["run", "--config", str(config), "-o", str(output), "--no-progress"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads(output.read_text())["meta"]


def test_the_dirty_flag_beside_the_recorded_sha(tiny_project, tmp_path):
    config = tiny_project(TARGET)
    assert _meta(config, tmp_path / "out" / "a.json")["git_dirty"] is None  # not a git checkout

    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "rag-ci.yml", "questions.yml")
    _git(tmp_path, "commit", "-qm", "questions")
    clean = _meta(config, tmp_path / "out" / "b.json")  # out/ is untracked: not a change
    assert clean["git_sha"] == _git(tmp_path, "rev-parse", "HEAD") and clean["git_dirty"] is False

    config.write_text(config.read_text() + "# edited, not committed\n")
    assert _meta(config, tmp_path / "out" / "c.json")["git_dirty"] is True
