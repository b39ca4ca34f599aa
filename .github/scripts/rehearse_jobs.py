#!/usr/bin/env python3
"""The release's job graph, rehearsed with a failure injected at each job.

release.yml is read as GitHub runs it: a job starts when every job it `needs` succeeded, a
failed job skips the jobs after it, and "Re-run failed jobs" runs the failed job and the ones it
skipped again, keeping what the jobs that succeeded produced. What each job makes public is read
from its steps (an image pushed by `skopeo copy ... docker://`, an attestation, tags pushed, a
PyPI upload, a GitHub Release, a pull request); what each public thing refers to is rag-ci's release as it is:

  the tags         -> the release commit, whose action.yml runs the image: pushed and pullable
                      by anyone (the package may start private: the pull check says so)
  PyPI's version   -> its wheel's `rag-ci init` writes `uses: OWNER/REPO@<release commit>`:
                      the tags
  the GitHub Release -> the tags and the PyPI version its notes install
  the attestation  -> the image
  the pin pull request -> the tags: it pins the README's and docs' snippets to the release
                      commit (merged by a human, once the release is out)

For each job, the run fails there (once before its public step, once after it: a step that
fails after an upload), then is resumed. A rehearsal passes when, after every failure, nothing
public refers to something that is not, and every resumed run completes; a job whose public
step cannot run twice (no skip-existing, no check for an existing tag or release) fails its
re-run. A first release whose package is private stops at the pull check and completes once
the package is public. This is a model of GitHub's scheduling run on the real workflow file,
not a runner: no step's commands run (nektos/act would need images and a binary from outside).

  rehearse_jobs.py [WORKFLOW]   prints one line a scenario; exit 1 when one fails
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

WORKFLOW = Path(__file__).resolve().parents[1] / "workflows" / "release.yml"

# A public thing -> the public things (and facts) it refers to.
REFERS_TO = {
    "image": set(),
    "attestation": {"image"},
    "tags": {"image", "image pullable"},
    "pypi": {"tags"},
    "github release": {"tags", "pypi"},
    "pin pull request": {"tags"},
}


def _text(step: dict) -> str:
    return f"{step.get('uses', '')}\n{step.get('run', '')}\n{step.get('with', '')}"


def publishes(step: dict) -> str | None:
    """The public thing this step makes, read from what it runs."""
    text = _text(step)
    if "skopeo copy" in text and "docker://" in text:
        return "image"
    if step.get("uses", "").startswith("actions/attest-build-provenance@"):
        return "attestation"
    if 'git push origin "refs/tags' in text:
        return "tags"
    if step.get("uses", "").startswith("pypa/gh-action-pypi-publish@"):
        return "pypi"
    if "gh release create" in text:
        return "github release"
    if "gh pr create" in text:
        return "pin pull request"
    return None


def runs_twice(step: dict, thing: str) -> bool:
    """Whether the step can run again once its thing exists (a re-run of its job)."""
    text = _text(step)
    return {
        "image": "--preserve-digests" in text,  # the same bytes under the same digest
        "attestation": True,  # a second attestation of the same digest is harmless
        "tags": "git ls-remote" in text,  # a tag already naming the commit is left
        "pypi": bool((step.get("with") or {}).get("skip-existing")),
        "github release": "gh release view" in text,
        "pin pull request": "gh pr list" in text,  # a pull request of the branch already there ends it
    }[thing]


@dataclass
class World:
    private_package: bool = False
    public: set[str] = field(default_factory=set)
    pull_checked: bool = False

    def facts(self) -> set[str]:
        return self.public | (
            {"image pullable"} if "image" in self.public and not self.private_package else set()
        )

    def dangling(self) -> list[str]:
        facts = self.facts()
        return sorted(f"{thing} -> {ref}" for thing in self.public for ref in REFERS_TO[thing] - facts)


def needs(job: dict) -> list[str]:
    value = job.get("needs", [])
    return [value] if isinstance(value, str) else list(value)


def run_job(name: str, job: dict, world: World, fail: str | None) -> bool:
    """One job's steps against the world; fail: 'before' or 'after' its public step, '' at its end."""
    for step in job.get("steps", []):
        thing = publishes(step)
        if thing:
            if fail == "before":
                return False
            if thing in world.public and not runs_twice(step, thing):
                return False  # the registry, PyPI or GitHub refuses the second upload
            world.public.add(thing)
        if "pull_anonymously.py" in _text(step) and world.private_package:
            return False  # the pull check: fails while the package is private
    return fail is None


def run_graph(jobs: dict, world: World, failing: dict[str, str], done: set[str]) -> set[str]:
    """One attempt: each job not yet done starts once all it needs succeeded (in whatever order
    the file lists them). Returns the jobs that failed or were skipped."""
    failed: set[str] = set()
    ready = True
    while ready:
        ready = [
            name
            for name, job in jobs.items()
            if name not in done | failed and all(n in done for n in needs(job))
        ]
        for name in ready:
            if run_job(name, jobs[name], world, failing.pop(name, None)):
                done.add(name)
            else:
                failed.add(name)
    return set(jobs) - done


def scenario(jobs: dict, fail_at: str | None, when: str, private: bool = False) -> tuple[bool, str]:
    world, done = World(private_package=private), set()
    left = run_graph(jobs, world, {fail_at: when} if fail_at else {}, done)
    after_failure = sorted(world.public)
    dangling = world.dangling()
    world.private_package = False  # the maintainer fixes the cause (the package made public)
    left = run_graph(jobs, world, {}, done) if left else left  # "Re-run failed jobs"
    ok = not dangling and not left and not world.dangling()
    label = (
        "package private at first"
        if private
        else f"{fail_at} fails {when} its public step"
        if when
        else f"{fail_at} fails"
    )
    said = f"public after the failure: {', '.join(after_failure) or 'nothing'}"
    if dangling:
        said += f"; REFERS TO WHAT IS NOT PUBLIC: {', '.join(dangling)}"
    said += "; resumed: " + ("completes" if not left else f"stuck at {', '.join(sorted(left))}")
    return ok, f"{'ok  ' if ok else 'FAIL'} {label}: {said}"


def rehearse(workflow: Path = WORKFLOW) -> list[tuple[bool, str]]:
    jobs = YAML(typ="safe").load(workflow.read_text(encoding="utf-8"))["jobs"]
    results = [scenario(jobs, None, "", private=True)]
    for name, job in jobs.items():
        if any(publishes(step) for step in job.get("steps", [])):
            results += [scenario(jobs, name, "before"), scenario(jobs, name, "after")]
        else:
            results.append(scenario(jobs, name, ""))
    return results


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    results = rehearse(Path(args[0]) if args else WORKFLOW)
    for _, line in results:
        print(line)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
