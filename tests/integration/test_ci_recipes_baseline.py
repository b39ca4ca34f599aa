"""The CLI recipes (examples/.gitlab-ci.yml, docs/sharding.md) never turn a missing baseline into
a pass: their baseline steps, run as the CI runs them (bash -eo pipefail), against a local
HTTP server playing GitLab's job-artifacts endpoint and a stub `gh`, with a stub `rag-ci` that
records how it was called."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from builders import EXAMPLES, REPO

STUB_RAG_CI = '#!/bin/sh\necho "$@" >> "$RECORD"\n'


def stub(folder: Path, name: str, text: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    (folder / name).chmod(0o755)


def run_bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": f"{cwd / 'bin'}:{os.environ['PATH']}", "RECORD": str(cwd / "calls"), **env},
    )


class Artifacts:
    """GitLab's `jobs/artifacts/<ref>/raw/<path>?job=` endpoint answering `status`."""

    def __init__(self, status: int):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = b'{"meta": {}}' if status == 200 else b'{"message": "404 Not found"}'
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def gitlab_merge_request_job(
    tmp_path: Path, status: int, **env: str
) -> tuple[subprocess.CompletedProcess, str]:
    script = YAML(typ="safe").load((EXAMPLES / ".gitlab-ci.yml").read_text())["rag-ci"]["script"]
    [step] = [s for s in script if "jobs/artifacts" in s]
    stub(tmp_path / "bin", "rag-ci", STUB_RAG_CI)
    artifacts = Artifacts(status)
    try:
        done = run_bash(
            step,
            tmp_path,
            {
                "CI_COMMIT_BRANCH": "feature",
                "CI_DEFAULT_BRANCH": "main",
                "CI_API_V4_URL": artifacts.url,
                "CI_PROJECT_ID": "1",
                "CI_JOB_TOKEN": "job-token",
                **env,
            },
        )
    finally:
        artifacts.server.shutdown()
        artifacts.server.server_close()
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    return done, calls


@pytest.mark.parametrize("status", [404, 500])
def test_the_gitlab_recipe_fails_the_job_when_the_baseline_cannot_be_fetched(tmp_path, status):
    done, calls = gitlab_merge_request_job(tmp_path, status)
    assert done.returncode == 2, done.stderr
    assert f"HTTP {status}" in done.stderr and "a missing baseline is not a pass" in done.stderr
    assert calls == ""  # never run ungated


def test_the_gitlab_recipe_bootstraps_only_when_the_project_says_it_has_no_baseline_yet(tmp_path):
    done, calls = gitlab_merge_request_job(tmp_path, 404, RAG_CI_NO_BASELINE_YET="true")
    assert done.returncode == 0, done.stderr
    assert "bootstrap" in done.stdout and "--baseline" not in calls and calls.startswith("run ")


def test_the_gitlab_recipe_never_bootstraps_past_a_server_error(tmp_path):
    done, calls = gitlab_merge_request_job(tmp_path, 500, RAG_CI_NO_BASELINE_YET="true")
    assert done.returncode == 2 and calls == ""


def test_the_gitlab_recipe_gates_against_the_fetched_baseline(tmp_path):
    done, calls = gitlab_merge_request_job(tmp_path, 200)
    assert done.returncode == 0, done.stderr
    assert "--baseline baseline.json" in calls


# --- docs/sharding.md's merge job ---------------------------------------------------------
def sharded_merge_steps() -> dict[str, str]:
    text = (REPO / "docs" / "sharding.md").read_text()
    [workflow] = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)[:1]
    steps = YAML(typ="safe").load(workflow)["jobs"]["merge"]["steps"]
    return {s["name"]: s["run"].replace("${{ github.base_ref }}", "main") for s in steps if "name" in s}


def sharded_gate(tmp_path: Path, gh: str) -> tuple[subprocess.CompletedProcess, str]:
    steps = sharded_merge_steps()
    stub(tmp_path / "bin", "gh", gh)
    stub(tmp_path / "bin", "rag-ci", STUB_RAG_CI)
    env = {"GITHUB_REPOSITORY": "acme/rag", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "BASE": "main"}
    fetched = run_bash(steps["Baseline of the base branch"], tmp_path, env)
    if fetched.returncode != 0:
        return fetched, ""
    gated = run_bash(steps["Gate"], tmp_path, env)
    return gated, (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""


def test_the_sharded_workflow_bootstraps_only_when_the_base_branch_never_had_a_successful_run(tmp_path):
    done, calls = sharded_gate(tmp_path, '#!/bin/sh\n[ "$2" = list ] && exit 0\nexit 1\n')  # no run listed
    assert done.returncode == 0 and "bootstrap on main" in done.stdout and calls == ""


def test_the_sharded_workflow_fails_when_a_listed_baseline_cannot_be_downloaded(tmp_path):
    gh = '#!/bin/sh\nif [ "$2" = list ]; then echo 1234; exit 0; fi\necho "no valid artifacts found to download" >&2; exit 1\n'
    done, calls = sharded_gate(tmp_path, gh)
    assert done.returncode == 2, done.stdout
    assert "the baseline of main (run 1234) could not be downloaded" in done.stdout and calls == ""


def test_the_sharded_workflow_fails_when_the_runs_cannot_be_listed(tmp_path):
    done, calls = sharded_gate(tmp_path, '#!/bin/sh\necho "HTTP 502" >&2; exit 1\n')
    assert done.returncode != 0 and calls == ""
