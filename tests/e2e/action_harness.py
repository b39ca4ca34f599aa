"""Running the action (`python -m rag_ci`, the image's entrypoint) the way the Actions runner does, against FakeGitHubServer.

The action runs as a subprocess with the runner's GITHUB_* variables, an event payload
file, the inputs as the env vars action.yml maps, and GITHUB_API_URL pointing at the
fake. What it leaves (exit code, stdout/stderr, step summary, outputs, files) is
collected in an ActionRun for the test to check.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
REPOSITORY = "acme/rag"
HEAD_SHA = "1" * 40
MERGE_BASE_SHA = "2" * 40
MERGE_SHA = "3" * 40  # the PR's merge commit, what actions/checkout checks out
BASE_SHA = "b" * 40  # pull_request_event()'s base commit


@dataclasses.dataclass
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]
    workspace: Path

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def copy_example_repository(dest: Path) -> Path:
    """The example project as the checked-out repository (rag-ci.yml at its root)."""
    shutil.copytree(EXAMPLES, dest, ignore=shutil.ignore_patterns(".index", "out", "__pycache__", "baseline"))
    return dest


def example_baseline(tmp: Path) -> bytes:
    """results.json of the example RAG as main has it: one real run of the engine."""
    workspace = copy_example_repository(tmp / "main-checkout")
    env = {**clean_env(), "EXAMPLE_RAG_REGRESSION": ""}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_ci.cli",
            "run",
            "--config",
            "rag-ci.yml",
            "-o",
            "results.json",
            "--no-progress",
        ],
        cwd=workspace,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return (workspace / "results.json").read_bytes()


def clean_env() -> dict[str, str]:
    """The process environment without anything GitHub- or rag-ci-related from the host."""
    keep = (
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "SYSTEMROOT",
        "RAG_CI_TARGET_USER",
    )
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def pull_request_event(number: int = 7, *, fork: bool = False, base: str = "main") -> dict[str, Any]:
    head_repo = "contributor/rag" if fork else REPOSITORY
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"ref": "feature", "sha": HEAD_SHA, "repo": {"full_name": head_repo}},
            "base": {"ref": base, "sha": BASE_SHA, "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def push_event(before: str = "4" * 40, after: str = "5" * 40) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": before,
        "after": after,
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def run_action(fake: Any, workspace: Path, *, timeout: float = 60, **how: Any) -> ActionRun:
    """Run the action once, as the runner would, in `workspace`; `how`: start_action's keywords."""
    process = start_action(fake, workspace, **how)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return finished_action(process, stdout, stderr, workspace)


def start_action(
    fake: Any,
    workspace: Path,
    *,
    event_name: str,
    event: dict[str, Any],
    token: str,
    inputs: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    umask: int = -1,
) -> subprocess.Popen:
    """Start the action (`python -m rag_ci`) as the runner would (with its `umask`), without waiting (see finished_action)."""
    runner_dir = workspace.parent / f"runner-{workspace.name}"
    runner_dir.mkdir(exist_ok=True)
    event_path = runner_dir / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    summary, output = runner_dir / "step_summary.md", runner_dir / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    is_pr = event_name == "pull_request"
    process_env = {
        **clean_env(),
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": MERGE_SHA if is_pr else event.get("after", "5" * 40),
        "GITHUB_REF": f"refs/pull/{event.get('number')}/merge"
        if is_pr
        else event.get("ref", "refs/heads/main"),
        "GITHUB_RUN_ID": "4242",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        # How action.yml hands the token over, plus the copy the runner adds for every input.
        "RAG_CI_GITHUB_TOKEN": token,
        "INPUT_GITHUB-TOKEN": token,
        **{f"RAG_CI_{k.upper().replace('-', '_')}": v for k, v in (inputs or {}).items()},
        **(env or {}),
    }
    process_env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [process_env.get("PYTHONPATH")])])
    return subprocess.Popen(
        [sys.executable, "-m", "rag_ci"],  # the image's entrypoint (Dockerfile)
        cwd=workspace,
        env=process_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        umask=umask,
    )


def finished_action(process: subprocess.Popen, stdout: str, stderr: str, workspace: Path) -> ActionRun:
    """What a run started by start_action left, once it ended."""
    runner_dir = workspace.parent / f"runner-{workspace.name}"
    summary, output = runner_dir / "step_summary.md", runner_dir / "output.txt"
    return ActionRun(
        process.returncode,
        stdout,
        stderr,
        summary.read_text(encoding="utf-8"),
        parse_outputs(output.read_text(encoding="utf-8")),
        workspace,
    )


def parse_outputs(text: str) -> dict[str, str]:
    """Read $GITHUB_OUTPUT in both forms the runner accepts (name=value, name<<DELIM)."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if m := re.fullmatch(r"([\w-]+)<<(.+)", line):
            value = []
            for inner in lines:
                if inner == m[2]:
                    break
                value.append(inner)
            outputs[m[1]] = "\n".join(value)
        elif "=" in line:
            name, _, value = line.partition("=")
            outputs[name] = value
    return outputs


def assert_token_never_leaked(token: str, run: ActionRun, fake: Any, *roots: Path) -> None:
    """The token shows up nowhere: not in output (but the runner's own ::add-mask:: line,
    which the runner consumes and never displays), not in any file, not in what was sent."""
    for stream in (run.stdout, run.stderr):
        for line in stream.splitlines():
            if token in line:
                assert line == f"::add-mask::{token}", f"token leaked in output line: {line[:80]!r}"
    for text in (run.summary, json.dumps(run.outputs)):
        assert token not in text
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                assert token.encode() not in path.read_bytes(), f"token leaked into {path}"
    for request in fake.requests:
        assert token not in json.dumps(request.body, default=str), (
            f"token sent in a request body to {request.path}"
        )
        assert token not in request.path and token not in json.dumps(request.query)


def judged_project(root: Path, judge_url: str, gate: str = "") -> Path:
    """A tiny project judged by an OpenAI-compatible server that reads its key from OPENAI_API_KEY."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tests" / "fakes" / "tiny_rag.py", root / "tiny_rag.py")
    (root / "questions.yml").write_text(
        "version: 1\nquestions:\n"
        "  - {id: Q-A, question: What is the delay on a?, reference: 10 ms, doc_id: a, sources: [a/x.md]}\n"
        "  - {id: Q-B, question: What is the delay on b?, reference: 20 ms, doc_id: b, sources: [b/y.md]}\n"
    )
    (root / "rag-ci.yml").write_text(
        "questions: questions.yml\n"
        "corpora: {a: {description: A}, b: {description: B}}\n"
        "target: {kind: command, command: [python, tiny_rag.py], generator_model: tiny-1, generator_family: tiny, timeout_s: 10}\n"
        f"judge: {{provider: openai-compatible, model: Qwen/Qwen2.5-7B-Instruct, base_url: '{judge_url}', api_key_env: OPENAI_API_KEY,\n"
        "        prices: {input_per_mtok: 0, output_per_mtok: 0}, max_retries: 0, backoff_s: 0.01, timeout_s: 5}\n"
        "metrics: {hit_at_k: {k: 5}, faithfulness: {threshold: 0.7}, correctness: {}}\n"
        f"{gate}"
    )
    return root
