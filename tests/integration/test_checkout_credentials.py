"""A RAG reading the checkout's git config never sees the job token.

actions/checkout keeps the token unless `persist-credentials: false`: v6 and later in
`$RUNNER_TEMP/git-credentials-<uuid>.config`, included from `.git/config` by `includeIf.gitdir:`
entries for the host's and the container's paths; v2 to v5 as `http.<origin>/.extraheader` in
`.git/config`; v1 (and GitLab) in the remote's URL. The checkouts below are laid out as
checkout's source (src/git-auth-helper.ts) writes them, with git itself. The RAG is a real
subprocess (tests/fakes/git_snooping_rag.py) that reads `.git/config`, follows its includes and
asks git, and answers with what it found: rag-ci refuses to start it (exit 2, naming
`persist-credentials: false`) while a credential is there, and runs it when none is.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.targets.git_credentials import credentials_in_checkout

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
TOKEN = "ghs_" + "R4gC1JobT0ken" * 3
HEADER = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
SNOOPING_TARGET = f"""
target:
  kind: command
  command: [python, {FAKES / "git_snooping_rag.py"}]
  timeout_s: 10
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def checkout(root: Path, runner_temp: Path, persist: str | None) -> None:
    """A checkout as actions/checkout leaves it; `persist` names the version whose way of keeping the token is used."""
    git(root, "init", "-q")
    git(root, "remote", "add", "origin", "https://github.com/octo/rag.git")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "the pull request")
    if (
        persist == "v6"
    ):  # the token in a file under RUNNER_TEMP, included for the host's and the container's paths
        runner_temp.mkdir(exist_ok=True)
        credentials = runner_temp / f"git-credentials-{uuid.uuid4()}.config"
        git(root, "config", "--file", str(credentials), "http.https://github.com/.extraheader", HEADER)
        git_dir = (root / ".git").as_posix()
        git(root, "config", "--local", f"includeIf.gitdir:{git_dir}.path", str(credentials))
        git(root, "config", "--local", f"includeIf.gitdir:{git_dir}/worktrees/*.path", str(credentials))
        container_credentials = f"/github/runner_temp/{credentials.name}"
        git(root, "config", "--local", "includeIf.gitdir:/github/workspace/.git.path", container_credentials)
        git(
            root,
            "config",
            "--local",
            "includeIf.gitdir:/github/workspace/.git/worktrees/*.path",
            container_credentials,
        )
    elif persist == "v5":
        git(root, "config", "--local", "http.https://github.com/.extraheader", HEADER)
    elif persist == "v1":
        git(root, "remote", "set-url", "origin", f"https://x-access-token:{TOKEN}@github.com/octo/rag.git")


def run(config: Path, output: Path):
    return CliRunner().invoke(
        cli, ["run", "--config", str(config), "-o", str(output), "--no-progress"], catch_exceptions=False
    )


def assert_never_shown(text: str) -> None:
    assert TOKEN not in text and HEADER.split()[-1] not in text


@pytest.mark.parametrize("persist", ["v6", "v5", "v1"])
def test_a_checkout_that_keeps_the_token_is_refused_before_the_rag_starts(tiny_project, tmp_path, persist):
    config = tiny_project(SNOOPING_TARGET)
    checkout(tmp_path, tmp_path.parent / f"{tmp_path.name}-runner-temp", persist)
    # The layout is real: git, as the RAG would run it, hands over the token.
    assert TOKEN in git(tmp_path, "config", "--list", "--includes") or HEADER in git(
        tmp_path, "config", "--list", "--includes"
    )

    result = run(config, tmp_path / "out" / "results.json")

    assert result.exit_code == 2, result.output
    assert "persist-credentials: false" in result.output
    assert_never_shown(result.output)
    assert not (tmp_path / "out" / "results.json").exists()  # no answer: the RAG never ran


def test_without_persisted_credentials_the_rag_runs_and_finds_nothing(tiny_project, tmp_path):
    config = tiny_project(SNOOPING_TARGET)
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)

    result = run(config, tmp_path / "out" / "results.json")

    # the snooping RAG answers badly; what matters is what it saw
    assert result.exit_code in (0, 1), result.output
    answers = {q["answer"] for q in json.loads((tmp_path / "out" / "results.json").read_text())["questions"]}
    assert answers == {"nothing found"}


def test_the_refusal_names_where_the_credential_is_and_never_its_value(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist="v6")
    with (tmp_path / ".git" / "config").open("a") as config:
        config.write(f'[url "https://x:{TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n')

    # the project folder may be below the checkout's root
    found = credentials_in_checkout(tmp_path / "sub" / "folder")

    keys = sorted(f.key for f in found)
    assert keys == ["http.https://github.com/.extraheader", "url.https://***@github.com/.insteadof"], keys
    assert all(TOKEN not in f.key for f in found)
    (header,) = [f for f in found if f.key.startswith("http.")]
    assert header.file.name.startswith("git-credentials-") and header.via == tmp_path / ".git" / "config"


def test_includes_that_loop_or_point_nowhere_end_the_search(tmp_path):
    git(tmp_path, "init", "-q")
    with (tmp_path / ".git" / "config").open(
        "a"
    ) as config:  # git refuses to write these; a PR's build step need not
        config.write("[include]\n\tpath = config\n\tpath = /github/runner_temp/not-here.config\n")
    assert credentials_in_checkout(tmp_path) == []


def test_the_gitlab_examples_first_step_takes_the_job_token_out_of_a_gitlab_clone(tmp_path):
    """GitLab clones with `https://gitlab-ci-token:TOKEN@host/...` as the remote; the example's
    step (plain sed: the image has no git) leaves a remote git still reads, without the token."""
    from ruamel.yaml import YAML

    script = YAML(typ="safe").load(
        (Path(__file__).resolve().parents[2] / "examples" / ".gitlab-ci.yml").read_text()
    )["rag-ci"]["script"]
    [step] = [line for line in script if ".git/config" in line]
    checkout = tmp_path / "project"
    checkout.mkdir()
    git(checkout, "init", "-q")
    git(
        checkout,
        "remote",
        "add",
        "origin",
        f"https://gitlab-ci-token:{TOKEN}@gitlab.example/group/project.git",
    )
    assert credentials_in_checkout(checkout)

    subprocess.run(["sh", "-ec", step], cwd=checkout, check=True, timeout=30)

    assert credentials_in_checkout(checkout) == []
    assert git(checkout, "remote", "get-url", "origin").strip() == "https://gitlab.example/group/project.git"


def rag_in_its_own_repository(workspace: Path, layout: str) -> Path:
    """The RAG's folder as a repository inside the workspace's checkout, as actions/checkout
    lays it out: a second checkout `with: {path: rag}`, or `submodules: true` (the
    submodule's git dir under the superproject's `.git/modules/`)."""
    rag = workspace / "rag"
    if layout == "path":
        rag.mkdir()
        checkout(rag, workspace / "runner-temp", persist=None)
        return rag
    source = workspace.parent / f"{workspace.name}-rag-source"
    source.mkdir()
    checkout(source, workspace / "runner-temp", persist=None)
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "rag")
    assert (rag / ".git").is_file() and "modules" in (rag / ".git").read_text()
    return rag


@pytest.mark.parametrize("layout", ["path", "submodule"])
@pytest.mark.parametrize("persist", ["v6", "v5"])
def test_a_token_in_the_workspace_checkout_is_found_from_a_rag_in_its_own_repository(
    tiny_project, tmp_path, layout, persist
):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    checkout(workspace, tmp_path / "runner-temp", persist)
    rag = rag_in_its_own_repository(workspace, layout)
    config = tiny_project(SNOOPING_TARGET)
    for name in ("rag-ci.yml", "questions.yml"):
        (tmp_path / name).rename(rag / name)
    # The layout is real: the RAG's own git config is clean, the workspace's is not.
    assert "extraheader" not in git(rag, "config", "--list", "--local")

    result = run(rag / config.name, tmp_path / "out" / "results.json")

    assert result.exit_code == 2, result.output
    assert "persist-credentials: false" in result.output and "extraheader" in result.output
    assert_never_shown(result.output)
    assert not (tmp_path / "out" / "results.json").exists()


def test_a_token_as_the_remotes_user_name_is_found(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    git(tmp_path, "remote", "set-url", "origin", f"https://{TOKEN}@github.com/octo/rag.git")

    [found] = credentials_in_checkout(tmp_path)

    assert found.key == "remote.origin.url" and TOKEN not in found.key


def test_a_credential_store_file_named_by_the_helper_is_found(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    store = tmp_path.parent / f"{tmp_path.name}-credentials"
    git(tmp_path, "config", "--local", "credential.helper", f"store --file={store}")
    assert credentials_in_checkout(tmp_path) == []  # nothing stored yet: nothing to hand out
    store.write_text(f"https://x-access-token:{TOKEN}@github.com\n")
    # git hands it out to whoever asks
    filled = subprocess.run(
        ["git", "credential", "fill"],
        cwd=tmp_path,
        input="protocol=https\nhost=github.com\n\n",
        capture_output=True,
        text=True,
        env={"GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/bin:/bin"},
    )
    assert TOKEN in filled.stdout

    [found] = credentials_in_checkout(tmp_path)

    assert found.key == "credential.helper"


def test_an_inline_helper_that_prints_a_password_is_found(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    git(
        tmp_path,
        "config",
        "--local",
        "credential.helper",
        f"!f() {{ echo username=x-access-token; echo password={TOKEN}; }}; f",
    )

    [found] = credentials_in_checkout(tmp_path)

    assert found.key == "credential.helper"


def test_a_byte_order_mark_does_not_hide_the_header(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    config = tmp_path / ".git" / "config"
    header = f'[http "https://github.com/"]\n\textraheader = {HEADER}\n'.encode()
    config.write_bytes(b"\xef\xbb\xbf" + header + config.read_bytes())
    assert HEADER in git(tmp_path, "config", "--list")  # git still reads it

    [found] = credentials_in_checkout(tmp_path)

    assert found.key == "http.https://github.com/.extraheader"


@pytest.mark.parametrize("header", ["X-Forwarded-Proto: https", "Accept: application/vnd.git-lfs+json"])
def test_a_header_without_a_credential_is_not_refused(tmp_path, header):
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    git(tmp_path, "config", "--local", "http.https://github.com/.extraheader", header)

    assert credentials_in_checkout(tmp_path) == []


def test_a_header_cleared_by_a_later_empty_value_is_not_refused(tmp_path):
    checkout(tmp_path, tmp_path / "runner-temp", persist="v5")
    git(tmp_path, "config", "--local", "--add", "http.https://github.com/.extraheader", "")
    git(
        tmp_path,
        "config",
        "--local",
        "--add",
        "http.https://github.com/.extraheader",
        "X-Forwarded-Proto: https",
    )

    assert credentials_in_checkout(tmp_path) == []
    # added again after
    git(tmp_path, "config", "--local", "--add", "http.https://github.com/.extraheader", HEADER)
    assert [f.key for f in credentials_in_checkout(tmp_path)] == ["http.https://github.com/.extraheader"]


def test_a_header_handed_over_by_pass_env_is_refused(tiny_project, tmp_path, monkeypatch):
    config = tiny_project(SNOOPING_TARGET.rstrip() + "\n  pass_env: [GIT_CONFIG_*]\n")
    checkout(tmp_path, tmp_path / "runner-temp", persist=None)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.https://github.com/.extraheader")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", HEADER)

    result = run(config, tmp_path / "out" / "results.json")

    assert result.exit_code == 2, result.output
    assert "GIT_CONFIG" in result.output
    assert_never_shown(result.output)
    assert not (tmp_path / "out" / "results.json").exists()
