"""The workflows `rag-ci init` writes, and whether the repository already runs rag-ci.

Split from the command (rag_ci.cli.init) because it is a job of its own: the four workflows
users copy are shipped in rag_ci/templates/workflows/ (copies of this repository's own
.github/workflows/rag-ci-*.yml), and a user's copy is made from them here: the lines marked
"your repository" changed, the action pinned to the release that built this wheel, the
baseline on the repository's default branch, each job holding its own permissions.
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import resources
from pathlib import Path

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError
from rag_ci.files.bounded_read import read_head_text

WORKFLOWS = ("rag-ci-pr.yml", "rag-ci-baseline.yml", "rag-ci-full.yml", "rag-ci-comment.yml")
# The one pin users copy: `OWNER/REPO@<commit sha> # vX.Y.Z`, the newest release's commit (the
# release stamps its own commit into the wheel it builds: .github/scripts/release.py
# stamp-action; the README's and docs' snippets carry the same line: release_pins.py). Before
# the first release it names a commit of main, `# main (before vX.Y.Z)`: its action.yml builds
# the image from the Dockerfile, so it works, only slower.
RELEASED_ACTION = "released-action.txt"
PIN = re.compile(
    r"(?P<action>[\w.-]+/[\w.-]+@[0-9a-f]{40}) # (?P<label>v\d+\.\d+\.\d+|main \(before v\d+\.\d+\.\d+\))",
    re.ASCII,
)


def rag_ci_workflow(root: Path) -> Path | None:
    """A workflow of the repository that already uses rag-ci (the action, or `rag-ci run`)."""
    folder = root / ".github" / "workflows"
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.y*ml")):
        text = read_head_text(path, 200_000)  # a regular file's first bytes only (bounded_read.py)
        if re.search(r"rag-ci/rag-ci@|\brag-ci\s+run\b", text):
            return path
    return None


def released_action() -> str:
    """`OWNER/REPO@<sha> # vX.Y.Z` (a release's commit) or `… # main (before vX.Y.Z)` (a commit
    of main, before the first release): what every workflow init writes pins."""
    text = (
        resources.files("rag_ci")
        .joinpath("templates", "workflows", RELEASED_ACTION)
        .read_text(encoding="utf-8")
        .strip()
    )
    if not PIN.fullmatch(text):
        raise UserError(
            f"this rag-ci's templates/workflows/{RELEASED_ACTION} holds {text[:120]!r}, not "
            "`OWNER/REPO@<40-hex commit sha> # vX.Y.Z`: reinstall rag-ci-gate from PyPI"
        )
    return text


def default_branch(root: Path) -> str:
    """The branch the baseline workflow runs on: origin's default branch, else the current one, else main."""
    for ref in ("refs/remotes/origin/HEAD", "HEAD"):
        try:
            done = subprocess.run(
                ["git", "-C", str(root), "symbolic-ref", "--quiet", "--short", ref],
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            return "main"
        name = done.stdout.strip().removeprefix("origin/") if done.returncode == 0 else ""
        if name and re.fullmatch(r"[\w./-]+", name):
            return name
    return "main"


def user_workflow(text: str, working_directory: str | None, *, action: str, branch: str = "main") -> str:
    """The repository's own workflow as a user's copy: the lines marked "your repository" changed,
    the action pinned, the baseline on `branch`, and each job holding its own permissions."""
    out = []
    for line in text.splitlines(keepends=True):
        if "# your repository: remove" in line and "working-directory:" in line:
            if working_directory:
                indent = line[: len(line) - len(line.lstrip())]
                out.append(f"{indent}working-directory: {working_directory}\n")
            continue
        if re.match(r"\s*(- )?uses: \./\s+# your repository\b", line):
            if "drop the checkout" in line:  # the action comes from the registry: no checkout needed
                _drop_checkout(out)
            out.append(
                re.sub(r"uses: \./\s+# your repository\b.*", lambda _: f"uses: {action}", line.rstrip("\n"))
                + "\n"
            )
            continue
        out.append(re.sub(r"^(\s+branches: \[)main\b", lambda m: f"{m[1]}{json.dumps(branch)}", line))
    return per_job_permissions("".join(out))


def per_job_permissions(text: str) -> str:
    """The top-level `permissions:` moved into every job, the top level left `{}`: a scope is
    granted where it is used (what OpenSSF Scorecard and zizmor ask of the workflows users copy)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"permissions:\s*\n?", line)), None)
    if start is None:
        return text
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    scopes = lines[start + 1 : end]
    lines[start:end] = ["permissions: {}        # each job asks for its own (below)\n"]
    jobs = next(i for i, line in enumerate(lines) if line.startswith("jobs:"))
    out = lines[: jobs + 1]
    for line in lines[jobs + 1 :]:
        out.append(line)
        if re.fullmatch(r"  [\w-]+:\s*\n?", line):  # a job's name
            out += ["    permissions:\n", *("    " + scope for scope in scopes)]
    return "".join(out)


def _drop_checkout(out: list[str]) -> None:
    """Remove the last `- uses: actions/checkout` step (its `with:` lines too) and the comment lines just above it."""
    for index in range(len(out) - 1, -1, -1):
        if re.match(r"\s*- uses: actions/checkout@", out[index]):
            start, end = index, index + 1
            while start > 0 and out[start - 1].lstrip().startswith("#"):
                start -= 1
            step_indent = len(out[index]) - len(out[index].lstrip())
            # the step's own lines are indented deeper than its `- `
            while (
                end < len(out) and len(out[end]) - len(out[end].lstrip()) > step_indent and out[end].strip()
            ):
                end += 1
            del out[start:end]
            return


def users_workflows(root: Path) -> dict[Path, str]:
    """The four workflows for the repository at `root`: its default branch, the action pinned by sha."""
    action, branch = released_action(), default_branch(root)
    if "# main (" in action:
        echo(
            f"note: this rag-ci was built before the first release: the workflows pin {action}, a commit "
            "of main whose action builds its image on each run; pin a release's commit once there is one",
            err=True,
        )
    else:
        echo(f"the workflows pin {action}: the release that built this rag-ci")
    return {
        root / ".github" / "workflows" / name: user_workflow(
            shipped_workflow(name), None, action=action, branch=branch
        )
        for name in WORKFLOWS
    }


def shipped_workflow(name: str) -> str:
    return resources.files("rag_ci").joinpath("templates", "workflows", name).read_text(encoding="utf-8")
