"""rag-ci's own image, built from the Dockerfile and run the way its users run it.

- As the Actions runner runs a Docker action: workspace at /github/workspace (owned by
  the runner user, uid 1001, as on GitHub's runners), INPUT_*/GITHUB_* variables, the
  event file, no arguments, against FakeGitHubServer on the host: a PR with a baseline
  artifact (exit 1 on the example's chunking regression, exactly one sticky comment)
  and a baseline push.
- As a CLI (GitLab CI, Jenkins, a laptop): `docker run IMAGE run …`, `--help`, `--version`;
  the example's rag-ci.yml, unchanged, gives the same answers on the host and in the image;
  and examples/.gitlab-ci.yml's script, run as GitLab runs it, gates a merge request against
  main's baseline fetched from a fake GitLab artifacts endpoint.
- The user's RAG in its own virtual environment: a RAG whose requirements pin
  pydantic<2 and numpy<1.26 builds and is gated, while rag-ci keeps pydantic 2; as a
  `kind: python` target too, whose worker imports the RAG's pins, not rag-ci's.
- Inside the image: a build step that reads /proc/1/environ and
  /proc/$PPID/environ and writes into the output folder gets nothing and changes nothing.
- The trimmed lock: every judge provider scores every judge metric inside the image.

The image is built once per module by .ci/build-image.sh (offline: the lock's wheels
come from the host's pip). Skipped, with the reason, only when no engine can start.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from action_harness import (
    EXAMPLES,
    HEAD_SHA,
    MERGE_BASE_SHA,
    MERGE_SHA,
    REPO,
    REPOSITORY,
    clean_env,
    copy_example_repository,
    parse_outputs,
    pull_request_event,
    push_event,
)
from ruamel.yaml import YAML

from builders import docker_engine_status
from fakes.fake_github import FakeGitHubServer
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1500)]

PREBUILT = os.environ.get("RAG_CI_TEST_IMAGE", "")  # an image built elsewhere (release.yml), tested as is
TAG = "rag-ci:e2e"
RUNNER_UID = 1001  # the `runner` user of GitHub's hosted runners, owner of the checkout
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


@pytest.fixture(scope="module")
def image() -> str:
    """The image's tag, built from this checkout (a skip that says why when there is no engine)."""
    if PREBUILT:
        subprocess.run(["docker", "image", "inspect", PREBUILT], check=True, capture_output=True, timeout=60)
        return PREBUILT
    status = docker_engine_status()
    if status.get("status") != "ready":
        pytest.skip(f"no Docker engine: {status.get('reason', 'run .ci/docker-engine.sh first')}")
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI on PATH")
    started = time.monotonic()
    built = subprocess.run(
        ["bash", str(REPO / ".ci" / "build-image.sh"), TAG], capture_output=True, text=True, timeout=1200
    )
    if built.returncode == 3:
        pytest.skip(built.stderr.strip())
    assert built.returncode == 0, built.stderr[-3000:]
    print(f"image {TAG} built in {time.monotonic() - started:.0f}s: {built.stdout.strip()}")
    return TAG


def docker_run(
    image: str,
    args: list[str],
    *,
    workspace: Path,
    workdir: str,
    env: dict[str, str] | None = None,
    mounts: list[str] | None = None,
    entrypoint: str | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """`docker run` with the host network (the fake servers listen on the host's 127.0.0.1)."""
    command = ["docker", "run", "--rm", "--network", "host", "-v", f"{workspace}:{workdir}", "-w", workdir]
    for name, value in (env or {}).items():
        command += ["-e", f"{name}={value}"]
    if HOST_CA.is_file():  # pip in the RAG's venv reaches PyPI through this machine's TLS proxy
        command += [
            "-v",
            f"{HOST_CA}:/etc/ssl/certs/host-ca.pem:ro",
            "-e",
            "PIP_CERT=/etc/ssl/certs/host-ca.pem",
        ]
    for mount in mounts or []:
        command += ["-v", mount]
    if entrypoint:
        command += ["--entrypoint", entrypoint]
    return subprocess.run([*command, image, *args], capture_output=True, text=True, timeout=timeout)


def as_runner_checkout(path: Path) -> Path:
    """What actions/checkout leaves: the files belong to the runner user, not root."""
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, RUNNER_UID, RUNNER_UID)
    return path


def run_as_action(
    image: str,
    fake: FakeGitHubServer,
    workspace: Path,
    *,
    event_name: str,
    event: dict,
    token: str,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess, dict[str, str], str]:
    """The container the runner starts for `uses: rag-ci/rag-ci@vX`: no arguments."""
    runner = workspace.parent / f"runner-{workspace.name}"
    (runner / "workflow").mkdir(parents=True, exist_ok=True)
    (runner / "file_commands").mkdir(exist_ok=True)
    (runner / "workflow" / "event.json").write_text(json.dumps(event))
    summary, output = runner / "file_commands" / "step_summary", runner / "file_commands" / "output"
    summary.write_text("")
    output.write_text("")
    is_pr = event_name == "pull_request"
    done = docker_run(
        image,
        [],
        workspace=workspace,
        workdir="/github/workspace",
        mounts=[
            f"{runner / 'workflow'}:/github/workflow",
            f"{runner / 'file_commands'}:/github/file_commands",
        ],
        env={
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "HOME": "/github/home",
            "RUNNER_TEMP": "/home/runner/work/_temp",
            "GITHUB_API_URL": fake.url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": "/github/workflow/event.json",
            "GITHUB_SHA": MERGE_SHA if is_pr else event.get("after", "5" * 40),
            "GITHUB_REF": f"refs/pull/{event.get('number')}/merge"
            if is_pr
            else event.get("ref", "refs/heads/main"),
            "GITHUB_RUN_ID": "4242",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKSPACE": "/github/workspace",
            "GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary",
            "GITHUB_OUTPUT": "/github/file_commands/output",
            "RAG_CI_GITHUB_TOKEN": token,
            "INPUT_GITHUB-TOKEN": token,
            "RAG_CI_CONFIG": "rag-ci.yml",
            "RAG_CI_OUTPUT_DIR": "rag-ci-output",
            **(env or {}),
        },
    )
    return done, parse_outputs(output.read_text()), summary.read_text()


@pytest.fixture
def fake(token: str):
    with FakeGitHubServer(token=token) as server:
        server.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        yield server


def test_the_image_as_a_pull_request_action_fails_on_the_regression_with_one_sticky_comment(
    image, fake, token, baseline_json, tmp_path
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    workspace = as_runner_checkout(copy_example_repository(tmp_path / "workspace"))

    started = time.monotonic()
    done, outputs, summary = run_as_action(
        image,
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": "chunking"},
    )
    print(f"runner-style PR run: {time.monotonic() - started:.1f}s wall")

    log = done.stdout + done.stderr
    assert done.returncode == 1, log[-4000:]
    assert outputs["verdict"] == "fail" and int(outputs["regressions"]) > 0
    [comment] = [c for c in fake.comments.get(7, []) if COMMENT_MARKER in c["body"]]
    assert "regression" in comment["body"]
    assert "## rag-ci" in summary
    assert "run in their own virtual environment /home/runner/work/_temp/rag-ci-target-venv" in log
    # The build ran as the checkout's owner: its index belongs to the runner user.
    assert (workspace / ".index").stat().st_uid == RUNNER_UID
    assert (workspace / "rag-ci-output" / "report.html").is_file()
    assert token not in log.replace(f"::add-mask::{token}", "")


PROBE = (
    "cat /proc/1/environ > .probe-init 2>/dev/null || echo denied > .probe-init; "
    "cat /proc/$PPID/environ > .probe-parent 2>/dev/null || echo denied > .probe-parent; "
    "touch rag-ci-output/planted 2>/dev/null || true"
)


def test_the_image_on_a_push_to_main_records_the_baseline_and_its_rag_reaches_no_secret(
    image, fake, token, tmp_path
):
    workspace = copy_example_repository(tmp_path / "workspace")
    # Inside the image: a build step that reads the container's and rag-ci's
    # environments and writes into rag-ci's output folder.
    config = (workspace / "rag-ci.yml").read_text().replace("build: [", f'build: ["{PROBE}", ', 1)
    (workspace / "rag-ci.yml").write_text(config)
    as_runner_checkout(workspace)
    judge_key = "sk-image-judge-key-7c1e"

    done, outputs, _ = run_as_action(
        image,
        fake,
        workspace,
        event_name="push",
        event=push_event(),
        token=token,
        env={"RAG_CI_OPENAI_API_KEY": judge_key, "INPUT_OPENAI-API-KEY": judge_key},
    )

    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert outputs["verdict"] == "baseline"
    results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
    assert results["meta"]["git_sha"] == "5" * 40
    assert "README.md" in fake.branches["rag-ci-data"]
    for probe in (".probe-init", ".probe-parent"):
        text = (workspace / probe).read_text()
        assert judge_key not in text and token not in text and text.strip() == "denied", (
            f"{probe}: {text[:200]!r}"
        )
        assert (workspace / probe).stat().st_uid == RUNNER_UID  # the build ran as the checkout's owner
    assert not (workspace / "rag-ci-output" / "planted").exists()


def test_the_image_with_arguments_is_the_cli(image, tmp_path):
    workspace = as_runner_checkout(copy_example_repository(tmp_path / "src"))

    version = docker_run(image, ["--version"], workspace=workspace, workdir="/src")
    helped = docker_run(image, ["--help"], workspace=workspace, workdir="/src")
    # not in Actions: the CLI, not the action
    bare = docker_run(image, [], workspace=workspace, workdir="/src")
    ran = docker_run(
        image,
        ["run", "--config", "rag-ci.yml", "-o", "out/results.json", "--no-progress"],
        workspace=workspace,
        workdir="/src",
    )

    assert version.returncode == 0 and version.stdout.startswith("rag-ci, version "), version.stderr
    assert helped.returncode == 0 and "Usage: rag-ci [OPTIONS] COMMAND" in helped.stdout
    assert "Usage: rag-ci" in bare.stdout + bare.stderr and "GITHUB_EVENT" not in bare.stdout + bare.stderr
    assert ran.returncode == 0, ran.stderr[-3000:]
    results = json.loads((workspace / "out" / "results.json").read_text())
    assert results["aggregates"]["overall"]["n"] == len(
        json.loads((EXAMPLES / "baseline" / "results.json").read_text())["questions"]
    )


def _answers(results_file: Path) -> list[tuple]:
    data = json.loads(results_file.read_text())
    return [(q["id"], q["answer"], q["contexts"], q["verdict"], q["error"]) for q in data["questions"]]


def test_one_rag_ci_yml_runs_unchanged_on_the_host_and_in_the_image(image, tmp_path):
    """docs/container.md#one-rag-ciyml-for-a-laptop-ci-and-the-image: the example's config, not
    one byte changed, run by `pip install`ed rag-ci on this machine and by the image on a
    runner-style checkout, gives every question the same answer, contexts and verdict."""
    host = copy_example_repository(tmp_path / "host")
    inside = as_runner_checkout(copy_example_repository(tmp_path / "image"))
    command = ["run", "--config", "rag-ci.yml", "-o", "out/results.json", "--no-progress"]
    on_host = subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", *command],
        cwd=host,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    in_image = docker_run(image, command, workspace=inside, workdir="/src")

    assert on_host.returncode == 0, on_host.stderr[-3000:]
    assert in_image.returncode == 0, in_image.stderr[-3000:]
    assert (
        (host / "rag-ci.yml").read_bytes()
        == (inside / "rag-ci.yml").read_bytes()
        == (EXAMPLES / "rag-ci.yml").read_bytes()
    )
    assert "rag-ci-target-venv" not in on_host.stderr  # on the host: rag-ci's interpreter, no venv of its own
    answers = _answers(host / "out" / "results.json")
    assert answers == _answers(inside / "out" / "results.json") and {a[3] for a in answers} == {"pass"}


class FakeGitLabArtifacts:
    """GitLab's job-artifacts endpoint, the one URL the GitLab example fetches main's baseline from."""

    PATH = "/api/v4/projects/42/jobs/artifacts/main/raw/rag-ci-output/results.json?job=rag-ci"

    def __init__(self, body: bytes, job_token: str):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                fake.requests.append((self.path, self.headers.get("JOB-TOKEN")))
                ok = self.path == fake.PATH and self.headers.get("JOB-TOKEN") == job_token
                self.send_response(200 if ok else 404)
                self.end_headers()
                self.wfile.write(body if ok else b"404 Not Found")

            def log_message(self, *args):
                pass

        self.requests: list[tuple[str, str | None]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v4"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_gitlab_example_gates_a_merge_request_against_main_baseline(
    image, baseline_json, token, tmp_path
):
    """examples/.gitlab-ci.yml's job as GitLab runs it: its `script:` in a shell with the entrypoint
    emptied, in a root-owned checkout, on a merge request branch with the example's regression."""
    job = YAML(typ="safe").load((EXAMPLES / ".gitlab-ci.yml").read_text())["rag-ci"]
    assert job["image"]["entrypoint"] == [""]
    workspace = copy_example_repository(tmp_path / "project")  # GitLab's checkout belongs to root
    gitlab = FakeGitLabArtifacts(baseline_json, token)
    started = time.monotonic()
    try:
        ran = docker_run(
            image,
            ["-ec", "\n".join(job["script"])],
            workspace=workspace,
            workdir="/builds/group/example",
            entrypoint="sh",
            env={
                "CI": "true",
                "GITLAB_CI": "true",
                "CI_PROJECT_DIR": "/builds/group/example",
                "CI_COMMIT_BRANCH": "feature",
                "CI_DEFAULT_BRANCH": "main",
                "CI_PROJECT_ID": "42",
                "CI_API_V4_URL": gitlab.url,
                "CI_JOB_TOKEN": token,
                "EXAMPLE_RAG_REGRESSION": "chunking",
            },
        )
    finally:
        gitlab.close()
    print(f"GitLab merge-request job: {time.monotonic() - started:.1f}s wall")

    log = ran.stdout + ran.stderr
    assert gitlab.requests == [(FakeGitLabArtifacts.PATH, token)], gitlab.requests
    assert "no baseline yet" not in log
    assert ran.returncode == 1, log[-4000:]  # the regression fails the job
    assert "regression" in ran.stdout  # the markdown report (--format md)
    assert (workspace / "rag-ci-output" / "results.json").is_file()


def download_wheels(requirements: list[str], dest: Path) -> None:
    """Wheels for the image's Python, fetched by the host's pip (the container may not reach PyPI)."""
    done = subprocess.run(
        [
            os.environ.get("PIP", "pip"),
            "download",
            "--quiet",
            "--only-binary=:all:",
            "--dest",
            str(dest),
            "--python-version",
            "311",
            "--implementation",
            "cp",
            "--abi",
            "cp311",
            "--abi",
            "none",
            "--platform",
            "manylinux_2_17_x86_64",
            "--platform",
            "manylinux2014_x86_64",
            "--platform",
            "any",
            *requirements,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot download the conflicting RAG's wheels here: {done.stderr.strip()[-300:]}")


def test_a_rag_pinning_pydantic_1_and_old_numpy_builds_in_its_own_venv_and_is_gated(image, tmp_path):
    workspace = copy_example_repository(tmp_path / "src")
    pins = ["pydantic<2", "numpy<1.26"]
    download_wheels(pins, workspace / "wheels")
    (workspace / "requirements.txt").write_text("\n".join(pins) + "\n")
    check = (
        "python -c \\\"import numpy, pydantic, sys; print('rag env', sys.prefix, pydantic.VERSION, numpy.__version__); "
        "assert pydantic.VERSION.startswith('1.') and numpy.__version__ < '1.26'\\\""
    )
    config = (
        (workspace / "rag-ci.yml")
        .read_text()
        .replace(
            "build: [",
            f'build: ["pip install -q --no-index --find-links wheels -r requirements.txt", "{check}", ',
            1,
        )
    )
    (workspace / "rag-ci.yml").write_text(config)
    (workspace / "baseline.json").write_text((EXAMPLES / "baseline" / "results.json").read_text())
    as_runner_checkout(workspace)

    ran = docker_run(
        image,
        [
            "run",
            "--config",
            "rag-ci.yml",
            "-o",
            "out/results.json",
            "--no-progress",
            "--verbose",
            "--baseline",
            "baseline.json",
        ],
        workspace=workspace,
        workdir="/src",
    )
    own = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--entrypoint",
            "/opt/rag-ci/venv/bin/python",
            image,
            "-c",
            "import pydantic, numpy; print(pydantic.VERSION, numpy.__version__)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )

    print(ran.stderr[-1500:])
    assert ran.returncode == 0, ran.stderr[-3000:]
    # the RAG's own venv, with its pins (--verbose shows it)
    assert "rag env /tmp/rag-ci-target-venv 1." in ran.stderr
    assert own.stdout.startswith("2."), own.stdout + own.stderr  # rag-ci's environment is untouched


# A `kind: python` entry that imports the example RAG in-process and refuses to load unless it
# sees its own pins: run with rag-ci's interpreter (pydantic 2, numpy 2) it cannot be imported.
PINNED_ENTRY = """
import sys
from pathlib import Path

import numpy
import pydantic

assert pydantic.VERSION.startswith("1.") and numpy.__version__ < "1.26", (sys.prefix, pydantic.VERSION, numpy.__version__)
Path(".python-target-env").write_text(f"{sys.prefix} {pydantic.VERSION} {numpy.__version__}")

from server import ExampleRag  # noqa: E402 - examples/rag on the target's path

RAG = ExampleRag.load()


def answer(request):
    return RAG.answer(request)
"""
PYTHON_TARGET = """questions: questions.yml
corpora_dir: corpora
target:
  kind: python
  entry: pinned_entry:answer
  path: [rag]
  build: ["pip install -q --no-index --find-links wheels -r requirements.txt", "python rag/ingest.py"]
  generator_model: extractive-bm25-1
  generator_family: extractive
  timeout_s: 10
metrics: {hit_at_k: {k: 5}, mrr: {}, keyword_coverage: {threshold: 0.6}, refusal: {}}
"""


def test_a_python_target_pinning_pydantic_1_imports_its_own_venv_inside_the_image(image, tmp_path):
    workspace = copy_example_repository(tmp_path / "src")
    pins = ["pydantic<2", "numpy<1.26"]
    download_wheels(pins, workspace / "wheels")
    (workspace / "requirements.txt").write_text("\n".join(pins) + "\n")
    (workspace / "rag" / "pinned_entry.py").write_text(PINNED_ENTRY)
    (workspace / "rag-ci.python.yml").write_text(PYTHON_TARGET)
    as_runner_checkout(workspace)

    started = time.monotonic()
    ran = docker_run(
        image,
        ["run", "--config", "rag-ci.python.yml", "-o", "out/results.json", "--no-progress"],
        workspace=workspace,
        workdir="/src",
    )
    print(f"kind: python conflicting-pins run: {time.monotonic() - started:.1f}s wall")

    assert ran.returncode == 0, ran.stderr[-3000:]
    prefix, pydantic_version, numpy_version = (workspace / ".python-target-env").read_text().split()
    assert (
        prefix == "/tmp/rag-ci-target-venv" and pydantic_version.startswith("1.") and numpy_version < "1.26"
    )
    results = json.loads((workspace / "out" / "results.json").read_text())
    assert results["aggregates"]["overall"]["n"] == len(
        json.loads((EXAMPLES / "baseline" / "results.json").read_text())["questions"]
    )
    assert not [q for q in results["questions"] if q.get("error")]


def test_every_judge_provider_scores_every_metric_inside_the_image(image, tmp_path):
    workspace = copy_example_repository(tmp_path / "src")
    shutil.copytree(REPO / "tests", workspace / "_tests", ignore=shutil.ignore_patterns("__pycache__"))
    as_runner_checkout(workspace)

    ran = docker_run(
        image,
        ["/src/_tests/e2e/image_judge_check.py", "/src", "/src/out"],
        workspace=workspace,
        workdir="/src",
        entrypoint="/opt/rag-ci/venv/bin/python",
    )

    assert ran.returncode == 0, (ran.stdout + ran.stderr)[-4000:]
    assert ran.stdout.count("judged metrics scored") == 4, ran.stdout
