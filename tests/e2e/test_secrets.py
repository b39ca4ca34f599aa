"""End to end: a target that tries to leak every secret it can reach leaks none.

The fake RAG (tests/fakes/leaky_rag.py) puts its environment, rag-ci's
/proc/$PPID/environ and /proc/1/environ into answers, contexts, an error reply and its
stderr (each value cut across a line break); a build step prints rag-ci's environment.
The judge key and the GitHub token must appear nowhere: not in the comment, the
summary, the outputs, any file, or the action's output (but the runner's ::add-mask::).
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from action_harness import (
    BASE_SHA,
    REPO,
    assert_token_never_leaked,
    clean_env,
    judged_project,
    pull_request_event,
    run_action,
)

from fakes.fake_github import FakeGitHubServer

pytestmark = pytest.mark.slow
LEAKY_RAG = REPO / "tests" / "fakes" / "leaky_rag.py"
QUESTIONS = """\
version: 1
questions:
  - {id: Q-A, question: What is the delay on a?, doc_id: a, sources: [a/x.md]}
  - {id: Q-E, question: Say error now, doc_id: b, sources: [b/x.md]}
"""
# Under root with no opt-out, the build step also shows that it runs as the target user
# and can write in the project folder (as a build writes its index).
BUILD = (
    "tr '\\\\0' '\\\\n' < /proc/$PPID/environ || echo cannot read; mkdir -p .index && id -u > .index/built"
)


def leaky_project(root: Path, *, python: str = "python", output_dir: str = "rag-ci-output") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(LEAKY_RAG, root / "leaky_rag.py")
    (root / "questions.yml").write_text(QUESTIONS)
    (root / "rag-ci.yml").write_text(
        "questions: questions.yml\n"
        "corpora: {a: {description: A}, b: {description: B}}\n"
        f"target: {{kind: command, command: [{python}, leaky_rag.py, {output_dir}], build: [{json.dumps(BUILD)}],\n"
        "         generator_model: leaky-1, generator_family: leaky, timeout_s: 10}\n"
        "metrics: {hit_at_k: {k: 5}}\n"
        # Q-E errors on purpose (its error reply carries secrets): one in two must not make a broken run.
        "gate: {max_error_rate: 1.0}\n"
    )
    return root


def judge_key() -> str:
    return "sk-proj-" + secrets.token_urlsafe(32)


def test_an_action_run_leaks_neither_the_judge_key_nor_the_token(tmp_path, token):
    key = judge_key()
    workspace = leaky_project(tmp_path / "workspace")
    with FakeGitHubServer(token=token) as fake:
        run = run_action(
            fake,
            workspace,
            event_name="pull_request",
            event=pull_request_event(),
            token=token,
            # Verbose: the build step's dump of rag-ci's environment is printed (redacted), not hidden.
            inputs={"openai-api-key": key},
            env={"INPUT_OPENAI-API-KEY": key, "RAG_CI_VERBOSE": "1"},
        )
        assert run.returncode == 0, run.log  # bootstrap: no baseline yet
        assert "[build] " in run.log
        [comment] = fake.comments[7]
        results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
        by_id = {q["id"]: q for q in results["questions"]}
        # The target did run and did try: its environment dump is in the answer, redacted.
        assert "PATH=" in by_id["Q-A"]["answer"] and "***" in by_id["Q-A"]["answer"]
        assert by_id["Q-E"]["verdict"] == "error" and "***" in by_id["Q-E"]["error"]
        assert "***" in results["meta"]["diagnostics"]
        assert "Q-E" in comment["body"]
        # The target's own environment is the allow-list: none of the action's inputs.
        own = json.loads(by_id["Q-A"]["contexts"][0]["text"])["own"]
        assert "INPUT_" not in own and "RAG_CI_OPENAI" not in own and "OPENAI_API_KEY" not in own
        for secret in (key, token):
            assert_token_never_leaked(secret, run, fake, tmp_path)
            assert secret[:12] not in run.log.replace(f"::add-mask::{secret}", "")


# The clouds' credentials (rag_ci/core/config/providers.py: the key variables and `secret_envs`).
CLOUD_CREDENTIALS = (
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
)


def test_a_cli_run_with_the_judge_key_in_the_environment_leaks_it_nowhere(tmp_path):
    key = judge_key()
    clouds = {name: judge_key() for name in CLOUD_CREDENTIALS}
    project = leaky_project(tmp_path / "project", output_dir=str(tmp_path / "out"))
    out = tmp_path / "out"
    out.mkdir()
    env = {**clean_env(), "OPENAI_API_KEY": key, **clouds}
    cli = [sys.executable, "-m", "rag_ci.cli"]
    runs = [  # --verbose: the build step's output is printed, and must be redacted
        subprocess.run(
            [
                *cli,
                "run",
                "--config",
                str(project / "rag-ci.yml"),
                "-o",
                str(out / "results.json"),
                "--no-progress",
                "--verbose",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        ),
        subprocess.run(
            [*cli, "report", str(out / "results.json"), "--format", "html", "-o", str(out / "report.html")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ),
        subprocess.run(
            [*cli, "report", str(out / "results.json"), "--format", "md"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ),
    ]
    assert [r.returncode for r in runs] == [0, 0, 0], runs[0].stderr[-2000:]
    answer = json.loads((out / "results.json").read_text())["questions"][0]["answer"]
    assert "PATH=" in answer  # the target did dump what it could reach
    assert "[build] " in runs[0].stderr
    for secret in (key, *clouds.values()):
        for done in runs:
            assert secret not in done.stdout + done.stderr and secret[:12] not in done.stdout + done.stderr
        for path in [*out.rglob("*"), *project.rglob("*")]:
            if path.is_file():
                assert (
                    secret.encode() not in path.read_bytes() and secret[:12].encode() not in path.read_bytes()
                ), path


def _python_for(uid: int) -> str | None:
    """A python3 that `uid` may execute (every folder on its path open to others)."""
    for candidate in (sys.executable, "/usr/local/bin/python3", "/usr/bin/python3"):
        path = Path(os.path.realpath(candidate))
        if path.exists() and all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents]):
            return str(path)
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="the target runs as another user only when rag-ci runs as root")
def test_under_root_the_target_runs_as_the_checkout_owner_and_cannot_read_secrets_or_touch_the_output(token):
    nobody = pwd.getpwnam("nobody")
    python = _python_for(nobody.pw_uid)
    if python is None:
        pytest.skip("no python3 that an unprivileged user can execute")
    key = judge_key()
    # Like GitHub's runner: the checkout belongs to an ordinary user, rag-ci runs as root.
    base = Path(tempfile.mkdtemp(prefix="rag-ci-privdrop-"))
    try:
        os.chmod(base, 0o755)
        workspace = leaky_project(base / "workspace", python=python)
        for path in [workspace, *workspace.rglob("*")]:
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        with FakeGitHubServer(token=token) as fake:
            run = run_action(
                fake,
                workspace,
                event_name="pull_request",
                event=pull_request_event(),
                token=token,
                inputs={"openai-api-key": key},
                env={"INPUT_OPENAI-API-KEY": key, "RAG_CI_TARGET_USER": "", "RAG_CI_VERBOSE": "1"},
            )
            assert run.returncode == 0, run.log
            output = workspace / "rag-ci-output"
            answer = json.loads((output / "results.json").read_text())["questions"][0]["answer"]
            assert f"uid:{nobody.pw_uid}" in answer
            assert (
                "parent:'unreadable (PermissionError)'" in answer
                and "init:'unreadable (PermissionError)'" in answer
            )
            assert "plant:refused (PermissionError)" in answer
            assert not (output / "planted.md").exists()
            assert output.stat().st_uid == 0 and not output.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            # The build step ran as the same user and could write its index in the checkout.
            assert (workspace / ".index" / "built").read_text().strip() == str(nobody.pw_uid)
            assert "[build] cannot read" in run.stderr  # it could not read rag-ci's environment either
            for secret in (key, token):
                assert_token_never_leaked(secret, run, fake, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- The judge's own errors ---------------------------------------------------
def assert_not_in_any_sink(fragments: list[str], run, fake, workspace: Path) -> None:
    """None of `fragments` in the log (but the runner's ::add-mask::), the summary, the outputs,
    the REST request bodies, or any file of the output folder (results, report.md, report.html)."""
    log = "\n".join(line for line in run.log.splitlines() if not line.startswith("::add-mask::"))
    sinks = {
        "log": log,
        "summary": run.summary,
        "outputs": json.dumps(run.outputs),
        "REST bodies": json.dumps([r.body for r in fake.requests], default=str),
    }
    for path in (workspace / "rag-ci-output").rglob("*"):
        if path.is_file():
            sinks[path.name] = path.read_text(encoding="utf-8", errors="replace")
    for name in ("results.json", "report.md", "report.html"):
        assert name in sinks, f"{name} was not written"
    for fragment in fragments:
        for name, text in sinks.items():
            assert fragment not in text, f"a piece of the judge key ({fragment[:6]}…) leaked into the {name}"


@pytest.mark.parametrize("broken", [True, False], ids=["broken run", "errors listed"])
@pytest.mark.parametrize("quote_key", ["full", "split", "wrapped"])  # wrapped: a key split across lines
def test_a_judge_quoting_its_key_in_a_401_leaks_it_into_no_sink_of_a_pr_run(
    tmp_path, token, quote_key, broken
):
    """The judge answers every call 401 with the key it was sent in its message. Broken run: every
    question errors, and the most common error is the notice of the comment, the summary and the
    log. Errors listed: `max_error_rate: 1.0` keeps the run a result, each metric's error is shown."""
    from fakes.judge_servers import FakeOpenAIJudgeServer

    key = judge_key()
    with (
        FakeOpenAIJudgeServer(always_fault="401", quote_key=quote_key) as judge,
        FakeGitHubServer(token=token) as fake,
    ):
        workspace = judged_project(
            tmp_path / "workspace", judge.base_url, gate="" if broken else "gate: {max_error_rate: 1.0}\n"
        )
        # the base branch's own judge
        fake.add_files_at(BASE_SHA, {"rag-ci.yml": (workspace / "rag-ci.yml").read_text()})
        run = run_action(
            fake,
            workspace,
            event_name="pull_request",
            event=pull_request_event(),
            token=token,
            inputs={"openai-api-key": key},
            env={"INPUT_OPENAI-API-KEY": key},
            timeout=180,
        )

        assert run.returncode == (2 if broken else 0), run.log
        assert judge.requests > 0 and {r.status for r in judge.log} == {401}
        results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
        errors = [m["error"] for q in results["questions"] for m in q["metrics"].values() if m.get("error")]
        assert errors and all("Incorrect API key provided: ***" in e for e in errors), errors
        if broken:  # the most common error is the comment's notice
            [comment] = fake.comments[7]
            assert "Incorrect API key provided: ***" in comment["body"].replace("\\", "")
        half = len(key) // 2
        assert_not_in_any_sink([key, key[:half], key[half:]], run, fake, workspace)
