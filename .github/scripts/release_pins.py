#!/usr/bin/env python3
"""The pin users copy, `rag-ci/rag-ci@<commit sha> # vX.Y.Z`, one line in one file and the same
line in every snippet.

The file is rag_ci/templates/workflows/released-action.txt (what `rag-ci init` writes as
`uses:`); the snippets are the `uses:` lines of the workflows shown in README.md and docs/*.md
(inside ```yaml fences). Before the first release the pin names a commit of main:
`# main (before vX.Y.Z)`. The workflows under .github/workflows/ hold no pin (their
`# your repository:` comments point at the README's): the job token that pushes the pin's
branch may not change a workflow file.

A commit cannot name its own sha, so the release tags its commit, then opens a pull request that
runs `pin-snippets` with it (release.yml's `pin-snippets` job); the next release's `build` runs
`check-snippets --tags`, which refuses to go on until that pull request was merged.

  pin-snippets --pin "OWNER/REPO@SHA # vX.Y.Z" [--root DIR]
        writes the pin into the file and into every snippet; prints the files changed
  check-snippets [--root DIR] [--tags FILE --version X.Y.Z]
        every snippet carries the file's pin (file:line of each that does not); with --tags (the
        output of `git ls-remote --tags origin`), the pin is also the newest release other
        than X.Y.Z: its tag's commit and its version

Standard library only (the jobs that run it install nothing). Every failure is one line
`release: …` on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIN_FILE = "rag_ci/templates/workflows/released-action.txt"
# The same two forms rag_ci/cli/init_workflows.py's PIN accepts (a test holds them equal).
PIN = re.compile(
    r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40}) # (?P<label>v(?P<version>\d+\.\d+\.\d+)"
    r"|main \(before v\d+\.\d+\.\d+\))",
    re.ASCII,
)
MARKDOWN = ("README.md", "docs/**/*.md")
FENCE = re.compile(r"^\s*```")
RELEASE_TAG = re.compile(r"^([0-9a-f]{40})\trefs/tags/v(\d+\.\d+\.\d+)(\^\{\})?$", re.ASCII)


class PinError(Exception):
    """Why the pin or a snippet is not what the release needs, in a line."""


def parse_pin(text: str) -> re.Match[str]:
    match = PIN.fullmatch(text.strip())
    if match is None:
        raise PinError(
            f"not a pin: {text.strip()[:120]!r} (expected `OWNER/REPO@<40-hex sha> # vX.Y.Z` "
            "or `… # main (before vX.Y.Z)`)"
        )
    return match


def file_pin(root: Path) -> re.Match[str]:
    return parse_pin((root / PIN_FILE).read_text(encoding="utf-8"))


def snippet_lines(root: Path) -> list[tuple[Path, int, str]]:
    """(file, line number, line) of every line where a snippet may pin the action: the lines
    inside ```yaml fences of the Markdown."""
    found = []
    for pattern in MARKDOWN:
        for path in sorted(root.glob(pattern)):
            fence = None
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if FENCE.match(line):
                    fence = None if fence is not None else line.strip()[3:].strip()
                elif fence in ("yaml", "yml"):
                    found.append((path, number, line))
    return found


def _occurrence(repos: set[str]) -> re.Pattern[str]:
    """`OWNER/REPO@…` to the end of the line, for one of `repos` (not inside a longer name,
    such as the image `ghcr.io/OWNER/REPO@sha256:…`)."""
    names = "|".join(sorted(map(re.escape, repos)))
    return re.compile(rf"(?<![\w./-])(?:{names})@.*$")


def check_snippets(root: Path = ROOT) -> list[str]:
    """The places (file:line) that pin the file's pin; an error names every one that does not."""
    pin = file_pin(root)
    occurrence = _occurrence({pin["repo"]})
    good, wrong = [], []
    for path, number, line in snippet_lines(root):
        where = f"{path.relative_to(root).as_posix()}:{number}"
        for match in occurrence.finditer(line):  # one at most: it runs to the line's end
            if match[0].rstrip() == pin[0]:
                good.append(where)
            else:
                wrong.append(f"{where} pins {match[0].rstrip()!r}")
    if wrong:
        raise PinError(
            f"not every snippet pins {pin[0]} ({PIN_FILE}): "
            + "; ".join(wrong)
            + " (python .github/scripts/release_pins.py pin-snippets --pin '<the file's pin>' rewrites them)"
        )
    if not good:
        raise PinError(f"no snippet pins {pin['repo']}@… in README.md or docs/")
    return good


def pin_snippets(pin_text: str, root: Path = ROOT) -> list[str]:
    """The file and every snippet set to the pin; returns the files changed."""
    pin = parse_pin(pin_text)
    repos = {pin["repo"]}
    try:
        repos.add(file_pin(root)["repo"])
    except PinError:
        pass  # a file holding something else: rewritten below
    occurrence = _occurrence(repos)
    changed: dict[Path, list[str]] = {}
    for path, number, line in snippet_lines(root):
        if occurrence.search(line):
            lines = changed.setdefault(path, path.read_text(encoding="utf-8").splitlines(keepends=True))
            ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")) :]
            lines[number - 1] = occurrence.sub(lambda _: pin[0], line) + ending
    if not changed:
        raise PinError(f"no snippet pins {' or '.join(sorted(repos))}@… in README.md or docs/")
    for path, lines in changed.items():
        path.write_text("".join(lines), encoding="utf-8")
    (root / PIN_FILE).write_text(pin[0] + "\n", encoding="utf-8")
    return sorted({PIN_FILE, *(p.relative_to(root).as_posix() for p in changed)})


def release_commits(ls_remote: str) -> dict[str, str]:
    """{version: commit} of every `vX.Y.Z` tag in `git ls-remote --tags` output (an annotated
    tag's `^{}` line names its commit; the moving `vX` tags are not releases)."""
    commits: dict[str, str] = {}
    for line in ls_remote.splitlines():
        match = RELEASE_TAG.match(line.strip())
        if match and (match[3] or match[2] not in commits):
            commits[match[2]] = match[1]
    return commits


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def check_previous_release(version: str, ls_remote: str, root: Path = ROOT) -> str | None:
    """The newest release (other than `version`, which a re-run may find tagged already), which
    the file must pin; None when there is none yet."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", version, flags=re.ASCII):
        raise PinError(f"version must look like 1.2.3 (no v), not {version!r}")
    earlier = {v: sha for v, sha in release_commits(ls_remote).items() if v != version}
    if not earlier:
        return None
    previous = max(earlier, key=_key)
    pin = file_pin(root)
    if pin["sha"] != earlier[previous] or pin["version"] != previous:
        raise PinError(
            f"{PIN_FILE} pins {pin['sha']} # {pin['label']}, not v{previous}'s commit "
            f"{earlier[previous]}: merge the pull request of the branch release-pins/v{previous} "
            f"(or run release_pins.py pin-snippets --pin '{pin['repo']}@{earlier[previous]} # v{previous}' "
            f"and merge that) before releasing {version}"
        )
    return previous


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release_pins.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    pin = sub.add_parser("pin-snippets")
    pin.add_argument("--pin", required=True)
    check = sub.add_parser("check-snippets")
    check.add_argument("--tags", type=Path)
    check.add_argument("--version")
    for step in (pin, check):
        step.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    try:
        if args.step == "pin-snippets":
            for name in pin_snippets(args.pin, args.root):
                print(f"release: pinned {name}")
            return 0
        if (args.tags is None) != (args.version is None):
            raise PinError("--tags and --version go together")
        places = check_snippets(args.root)
        print(f"release: {len(places)} snippets pin {file_pin(args.root)[0]}")
        if args.tags is not None:
            previous = check_previous_release(args.version, args.tags.read_text(encoding="utf-8"), args.root)
            print(
                f"release: the pin is v{previous}'s commit, the newest release"
                if previous
                else f"release: no release before {args.version}: the pin may name a commit of main"
            )
    except (PinError, OSError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
