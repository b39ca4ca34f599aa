"""The job token is found where the first pass did not look: in a checkout *below* the RAG's
folder, and in the global git config of the HOME the RAG gets.

A second `actions/checkout` with `path: corpora/docs` (credentials persisted, the default)
put the token's header in `corpora/docs/.git/config`, inside the RAG's folder: the RAG read
it and it reached results.json. A step's `git config --global url."https://x-access-token:…@
github.com/".insteadOf` (private dependencies) left it in `~/.gitconfig` or
`$XDG_CONFIG_HOME/git/config`. The layouts are made with git itself, and the RAG is the real
snooping subprocess of test_checkout_credentials.py: rag-ci refuses to start it (exit 2),
naming the file and the workflow's fix.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_checkout_credentials import HEADER, SNOOPING_TARGET, TOKEN, assert_never_shown, checkout, git, run

from rag_ci.targets.git_credentials import credentials_in_checkout, credentials_in_home
from rag_ci.targets.git_places import repositories_below

pytestmark = pytest.mark.slow

INSTEAD_OF = f"url.https://x-access-token:{TOKEN}@github.com/.insteadOf"


@pytest.mark.parametrize("persist", ["v6", "v5", "v1"])
def test_a_second_checkout_below_the_rags_folder_that_keeps_the_token_is_refused(
    tiny_project, tmp_path, persist
):
    config = tiny_project(SNOOPING_TARGET)
    checkout(tmp_path, tmp_path.parent / f"{tmp_path.name}-runner-temp", persist=None)  # the workspace: clean
    docs = tmp_path / "corpora" / "docs"
    docs.mkdir(parents=True)
    checkout(docs, tmp_path.parent / f"{tmp_path.name}-runner-temp", persist)
    listed = git(docs, "config", "--list", "--includes")
    assert TOKEN in listed or HEADER in listed  # git, in the RAG's folder's sub-folder, hands it over

    result = run(config, tmp_path / "out" / "results.json")

    assert result.exit_code == 2, result.output
    assert "corpora/docs" in result.output and "persist-credentials: false" in result.output
    assert_never_shown(result.output)
    assert not (tmp_path / "out" / "results.json").exists()  # no answer: the RAG never ran


def test_a_clean_checkout_below_is_no_reason_to_refuse(tiny_project, tmp_path):
    config = tiny_project(SNOOPING_TARGET)
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    (tmp_path / "corpora" / "docs").mkdir(parents=True)
    checkout(tmp_path / "corpora" / "docs", tmp_path / "runner-temp", persist=None)

    result = run(config, tmp_path / "out" / "results.json")

    assert result.exit_code in (0, 1), result.output
    assert '"nothing found"' in (tmp_path / "out" / "results.json").read_text()


def home_with_token(home: Path, where: str, monkeypatch) -> Path:
    """A HOME whose global git config carries the token as a step for private dependencies
    writes it (`git config --global`); `where`: ~/.gitconfig or $XDG_CONFIG_HOME/git/config."""
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    if where == "xdg":
        xdg = home.parent / f"{home.name}-xdg"
        (xdg / "git").mkdir(parents=True)
        (
            xdg / "git" / "config"
        ).touch()  # git --global writes here once the file exists (and ~/.gitconfig does not)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    git(home, "config", "--global", INSTEAD_OF, "https://github.com/")
    written = xdg / "git" / "config" if where == "xdg" else home / ".gitconfig"
    assert TOKEN in written.read_text()
    return written


@pytest.mark.parametrize("where", ["gitconfig", "xdg"])
def test_a_token_in_the_homes_global_git_config_is_refused(tiny_project, tmp_path, monkeypatch, where):
    config = tiny_project(SNOOPING_TARGET)
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    written = home_with_token(tmp_path.parent / f"{tmp_path.name}-home", where, monkeypatch)
    assert TOKEN in git(tmp_path, "config", "--list")  # git run in the checkout hands it over

    result = run(config, tmp_path / "out" / "results.json")

    assert result.exit_code == 2, result.output
    assert str(written) in result.output and "git config --global" in result.output
    assert_never_shown(result.output)
    assert not (tmp_path / "out" / "results.json").exists()


def test_another_home_in_target_env_does_not_hide_rag_cis_own(tmp_path, monkeypatch):
    written = home_with_token(tmp_path / "home", "gitconfig", monkeypatch)
    (tmp_path / "clean-home").mkdir()

    [found] = credentials_in_home(tmp_path, {"HOME": str(tmp_path / "clean-home")})

    assert found.file == written and found.home and TOKEN not in found.key


def test_the_walk_below_follows_no_link_and_enters_no_git_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    git(outside, "init", "-q")
    project = tmp_path / "project"
    (project / "corpora" / "docs").mkdir(parents=True)
    git(project / "corpora" / "docs", "init", "-q")
    (project / "linked").symlink_to(outside)  # a link leaving the folder: not this folder's repository
    (project / "loop").symlink_to(project)

    assert repositories_below(project) == [project / "corpora" / "docs"]
    assert credentials_in_checkout(project) == []


def test_a_submodule_below_the_rags_folder_is_checked_through_its_git_file(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    checkout(source, tmp_path / "runner-temp", persist=None)
    project = tmp_path / "project"
    project.mkdir()
    checkout(project, tmp_path / "runner-temp", persist=None)
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "corpora/docs")
    git(project / "corpora" / "docs", "config", "--local", "http.https://github.com/.extraheader", HEADER)

    listed = subprocess.run(
        ["git", "config", "--list"], cwd=project / "corpora" / "docs", capture_output=True, text=True
    )
    assert HEADER in listed.stdout

    found = credentials_in_checkout(
        tmp_path
    )  # the RAG's folder holds the superproject, which holds the submodule

    assert [f.key for f in found] == ["http.https://github.com/.extraheader"]  # its config, once
    assert found[0].file == project / ".git" / "modules" / "corpora" / "docs" / "config"
