"""release.yml run by nektos/act on this machine, GitHub and ghcr.io out of reach, with the fakes
of this folder, and resumed the way "Re-run failed jobs" resumes it.

A Rehearsal keeps one world (fake_state.py) across attempts of one workflow run (one run id):
  - the repository: the commit under test, pushed to the fake GitHub's origin as `main`; act runs
    from a clone of it whose origin is named https://github.com/rag-ci/rag-ci, and git itself
    (the run's HOME) resolves that URL to the fake origin, so checkouts, `git ls-remote` and
    `git push` of every job reach it;
  - each `uses:` of the workflow is replaced by its fake (actions/, act --local-repository);
    a `uses:` without a fake stops the rehearsal saying so;
  - skopeo, docker and gh are the shims of bin/; ghcr.io is FakeGhcr behind HTTPS_PROXY; every
    `run:` line and the project's .github/scripts run for real.

An attempt runs a copy of the workflow edited three ways, and only these: a last step in every
job records that the job succeeded and its outputs; a job that succeeded in an earlier attempt
is replaced by one that only gives those outputs back (GitHub's re-run keeps the jobs that
succeeded, their outputs and their artifacts, and runs the failed jobs and the ones they
skipped); and failures may be injected, each a step of a job. Steps this machine cannot run
(NOT_REHEARSED) are replaced by a warning, named in the log.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from fakes.release import fake_state
from fakes.release.fake_ghcr import FakeGhcr

HERE = Path(__file__).resolve().parent
REPOSITORY = "rag-ci/rag-ci"
TOKEN = "ghs_rehearsal_fake_token"
FAKES = {  # the action a `uses:` names -> its fake's folder under actions/
    "actions/checkout": "checkout",
    "actions/setup-python": "setup-python",
    "docker/setup-qemu-action": "no-op",
    "docker/setup-buildx-action": "no-op",
    "docker/build-push-action": "build-push",
    "actions/upload-artifact": "upload-artifact",
    "actions/download-artifact": "download-artifact",
    "actions/attest-build-provenance": "attest-build-provenance",
    "pypa/gh-action-pypi-publish": "pypi-publish",
}
# Steps that need what this machine has not, with why: replaced by a warning in the copy.
NOT_REHEARSED = {
    "tests/e2e/test_image.py": "runs the image's own tests on a Docker engine (none here; the fake daemon keeps metadata only)",
}
INJECTED = "Rehearsal: injected failure"


@dataclass
class Attempt:
    injected: dict[str, int | None]  # job -> where its failure was injected
    returncode: int
    done: set[str]
    left: set[str]
    public: dict[str, list[str]]
    dangling: list[str]
    seconds: float
    log: str = field(repr=False)

    def failed_steps(self) -> list[str]:
        """`job: step` of every step act reports as failed (matrix legs numbered by act)."""
        return sorted(
            {
                f"{m[1].strip()}: {m[2].strip()}"
                for m in re.finditer(
                    r"^\[[^/\]]+/([^\]]+)\]\s+❌\s+Failure - Main (.+?)(?: \[[^\]]*\])?$",
                    self.log,
                    flags=re.M,
                )
            }
        )


def needs(job: dict) -> list[str]:
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


def _record_step(name: str, job: dict) -> dict:
    env = {f"OUT_{key}": value for key, value in (job.get("outputs") or {}).items()}
    matrix = "strategy" in job
    return {
        "name": "Rehearsal: the job succeeded (its outputs kept)",
        "env": env or None,
        "run": f'python3 "$FAKE_RELEASE/fake_actions.py" record-job {name} '
        + ('"${{ strategy.job-index }}" "${{ strategy.job-total }}"' if matrix else '"" ""'),
    }


def edited_jobs(jobs: dict, done: dict[str, dict], inject: dict[str, int | None]) -> dict:
    """The attempt's copy of the jobs (see the module's docstring); inject: job -> the index of
    the step the failure comes before, or None for the job's end."""
    edited = {}
    for name, job in jobs.items():
        if name in done:  # kept from an earlier attempt: only its outputs, given back
            outputs = done[name]
            edited[name] = {
                "runs-on": job["runs-on"],
                **({"needs": job["needs"]} if "needs" in job else {}),
                "outputs": {k: f"${{{{ steps.replay.outputs.{k} }}}}" for k in outputs},
                "steps": [
                    {
                        "id": "replay",
                        "name": "Rehearsal: succeeded in an earlier attempt (re-run keeps it and its outputs)",
                        "env": {"REPLAY": json.dumps(outputs)},
                        "run": 'python3 "$FAKE_RELEASE/fake_actions.py" replay-outputs',
                    }
                ],
            }
            continue
        job = copy.deepcopy(job)
        steps = job["steps"]
        for step in steps:
            for marker, why in NOT_REHEARSED.items():
                if marker in str(step.get("run", "")):
                    step["env"] = {
                        **(step.get("env") or {}),
                        "NOT_REHEARSED": f"{step.get('name', marker)}: {why}",
                    }
                    step["run"] = 'echo "::warning::not rehearsed: $NOT_REHEARSED"'
        if name in inject:
            at = len(steps) if inject[name] is None else inject[name]
            steps.insert(at, {"name": INJECTED, "run": "echo '::error::injected failure'; exit 1"})
        steps.append({k: v for k, v in _record_step(name, job).items() if v is not None})
        edited[name] = job
    return edited


def local_repositories(jobs: dict) -> list[str]:
    """act's --local-repository for every `uses:` of the workflow, each to its fake."""
    found = []
    for name, job in jobs.items():
        for step in job.get("steps", []):
            uses = step.get("uses")
            if not uses:
                continue
            action = uses.split("@")[0]
            if action not in FAKES:
                raise ValueError(
                    f"job {name} uses {action}, which the rehearsal has no fake of (tests/fakes/release/actions)"
                )
            found.append(f"{uses}={HERE / 'actions' / FAKES[action]}")
    return sorted(set(found))


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class Rehearsal:
    """One workflow run of WORKFLOW at the commit HEAD of SOURCE, in ROOT; a context manager
    (FakeGhcr serves while it is open)."""

    def __init__(
        self, act: str, source: Path, workflow: Path, root: Path, version: str, only: set[str] | None = None
    ) -> None:
        self.act, self.root, self.version = act, root, version
        self.workflow = YAML(typ="safe").load(workflow.read_text(encoding="utf-8"))
        self.jobs = {k: v for k, v in self.workflow["jobs"].items() if only is None or k in only}
        self.state, self.home, self.work = root / "state", root / "home", root / "work"
        self.done: dict[str, dict] = {}  # job -> its outputs, for the jobs that succeeded
        self.attempts: list[Attempt] = []
        self._origin(source)
        self.ghcr = FakeGhcr(self.state, root / "certificates")

    def _origin(self, source: Path) -> None:
        origin = fake_state.origin(self.state)
        origin.mkdir(parents=True)
        _git("init", "-q", "--bare", "-b", "main", str(origin))
        _git("-C", str(origin), "config", "uploadpack.allowAnySHA1InWant", "true")
        _git("-C", str(origin), "fetch", "-q", "--no-tags", str(source), "+HEAD:refs/heads/main")
        (self.state / "github" / "token").write_text(TOKEN)
        _git("clone", "-q", "--depth", "1", f"file://{origin}", str(self.work))
        _git("-C", str(self.work), "remote", "set-url", "origin", f"https://github.com/{REPOSITORY}.git")
        self.home.mkdir()
        for key, value in (
            (f"url.file://{origin}.insteadOf", f"https://github.com/{REPOSITORY}"),
            ("protocol.file.allow", "always"),
            ("safe.directory", "*"),
            ("init.defaultBranch", "main"),
        ):
            _git("config", "--file", str(self.home / ".gitconfig"), key, value)
        self.sha = _git("-C", str(self.work), "rev-parse", "HEAD").strip()

    def __enter__(self) -> Rehearsal:
        self.ghcr.__enter__()
        files = self.root / "act"
        files.mkdir()
        (files / "event.json").write_text(
            json.dumps(
                {
                    "inputs": {"version": self.version},
                    "ref": "refs/heads/main",
                    "repository": {
                        "default_branch": "main",
                        "full_name": REPOSITORY,
                        "name": REPOSITORY.split("/")[1],
                        "owner": {"login": REPOSITORY.split("/")[0]},
                    },
                }
            )
        )
        no_proxy = "localhost,127.0.0.1,pypi.org,files.pythonhosted.org"
        (files / "env").write_text(
            "".join(
                f"{k}={v}\n"
                for k, v in {
                    "FAKE_STATE": self.state,
                    "FAKE_RELEASE": HERE,
                    "HTTPS_PROXY": self.ghcr.proxy,
                    "https_proxy": self.ghcr.proxy,
                    "NO_PROXY": no_proxy,
                    "no_proxy": no_proxy,
                    "SSL_CERT_FILE": self.ghcr.bundle,
                    # The jobs run as root here, as the unprivileged `runner` on GitHub's machines: the
                    # demo's RAG keeps the job's user, as it does there (rag_ci/targets/process_user.py).
                    "RAG_CI_TARGET_USER": "root",
                    # The run's HOME is its own; pip's downloads are the machine's to reuse.
                    "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or Path.home() / ".cache" / "pip",
                }.items()
            )
        )
        (files / "secrets").write_text(f"GITHUB_TOKEN={TOKEN}\n")
        return self

    def __exit__(self, *exc) -> None:
        self.ghcr.__exit__(*exc)

    def make_package_public(self) -> None:
        """The one-time setting pull-check names, done by the maintainer."""
        for marker in (self.state / "registry").glob("*/*/*/private"):
            marker.unlink()

    def attempt(self, inject: dict[str, int | None] | None = None, timeout: float = 600) -> Attempt:
        """One attempt of the run: the first, or "Re-run failed jobs" after the previous one."""
        inject = inject or {}
        edited = edited_jobs(self.jobs, self.done, inject)
        path = self.root / "act" / f"attempt-{len(self.attempts) + 1}.yml"
        document = {**{k: v for k, v in self.workflow.items() if k != "jobs"}, "jobs": edited}
        writer = YAML()
        writer.width = 1 << 20  # no folding: ruamel folds a double-quoted `\`` into `\ ``
        with path.open("w") as stream:
            writer.dump(document, stream)
        if YAML(typ="safe").load(path.read_text(encoding="utf-8")) != document:
            raise RuntimeError(f"{path} does not read back as the workflow it was written from")
        shutil.rmtree(self.home / ".cache" / "act", ignore_errors=True)  # a fresh runner for every job
        shutil.rmtree(self.state / "rehearsal" / "jobs", ignore_errors=True)
        files = self.root / "act"
        command = [
            self.act,
            "workflow_dispatch",
            "-W",
            str(path),
            "-P",
            "ubuntu-latest=-self-hosted",
            "--eventpath",
            str(files / "event.json"),
            "--env-file",
            str(files / "env"),
            "--secret-file",
            str(files / "secrets"),
            "--input",
            f"version={self.version}",
            "--no-skip-checkout",
            "--concurrent-jobs",
            "1",
            "--action-offline-mode",
            *(arg for repo in local_repositories(self.jobs) for arg in ("--local-repository", repo)),
        ]
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("XDG_RUNTIME_DIR", "REGISTRY_AUTH_FILE", "VIRTUAL_ENV")
        }
        env.update(
            HOME=str(self.home),
            PATH=os.pathsep.join([str(HERE / "bin"), str(Path(sys.base_prefix) / "bin"), env["PATH"]]),
        )
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=self.work, env=env, capture_output=True, text=True, timeout=timeout
        )
        seconds = time.monotonic() - started
        self._collect()
        record = Attempt(
            injected=inject,
            returncode=done.returncode,
            done=set(self.done),
            left=set(self.jobs) - set(self.done),
            public=fake_state.public(self.state),
            dangling=fake_state.dangling(self.state),
            seconds=seconds,
            log=done.stdout + done.stderr,
        )
        path.with_suffix(".log").write_text(record.log)  # beside the attempt's workflow
        self.attempts.append(record)
        return record

    def _collect(self) -> None:
        """The jobs whose last step ran (all their legs, for a matrix) and their outputs."""
        legs: dict[str, list[dict]] = {}
        for path in sorted((self.state / "rehearsal" / "jobs").glob("*.json")):
            legs.setdefault(path.name.split(".")[0], []).append(json.loads(path.read_text()))
        for name, records in legs.items():
            if len(records) == int(records[0]["total"]):
                self.done[name] = records[0]["outputs"]


def step_index(job: dict, uses: str) -> int:
    """The index of the job's first step that uses the action `uses` (owner/name)."""
    return next(i for i, step in enumerate(job["steps"]) if str(step.get("uses", "")).startswith(uses + "@"))


def pulls_anonymously(job: dict) -> bool:
    return any("pull_anonymously.py" in str(step.get("run", "")) for step in job.get("steps", []))


def failure_plan(jobs: dict) -> list[dict[str, int | None] | None]:
    """The failures of each attempt, level by level of the job graph (the jobs whose needs the
    levels before hold: they run in the same attempt, so they fail in the same attempt). A job
    that uploads artifacts fails before its first upload (a re-run of an upload is another
    matter: tests/e2e/test_release_act.py), every other job after its last step, after what it
    made public. The pull check's level (None) is not injected: it fails by itself while the
    package is private."""
    levels: list[list[str]] = []
    placed: set[str] = set()
    while len(placed) < len(jobs):
        level = [n for n, j in jobs.items() if n not in placed and all(x in placed for x in needs(j))]
        levels.append(level)
        placed.update(level)
    plan: list[dict[str, int | None] | None] = []
    for level in levels:
        if any(pulls_anonymously(jobs[name]) for name in level):
            plan.append(None)
            continue
        plan.append({})
        for name in level:
            uploads = any(
                str(s.get("uses", "")).startswith("actions/upload-artifact@") for s in jobs[name]["steps"]
            )
            plan[-1][name] = step_index(jobs[name], "actions/upload-artifact") if uploads else None
    return plan


def every_job_fails_once(rehearsal: Rehearsal) -> list[Attempt]:
    """One run where each job fails once (failure_plan), each failure resumed with "Re-run
    failed jobs"; the package is made public after the pull check failed. The last attempt
    fails nowhere."""
    for inject in failure_plan(rehearsal.jobs):
        rehearsal.attempt(inject)
        if inject is None:
            rehearsal.make_package_public()
    rehearsal.attempt()
    return rehearsal.attempts
