"""A fake `gh` (GitHub CLI) on the fake GitHub of fake_state.py: releases and pull requests.

  gh release view TAG --repo R
  gh release create TAG --repo R [--verify-tag] [--title T] [--notes-file F | --notes N]
  gh release upload TAG --repo R [--clobber] FILE...
  gh pr create --repo R --head B --base B --title T (--body B | --body-file F)
  gh pr list --repo R [--head B] [--state open|all] [--json F,... [--jq .[].F]]

It answers as GitHub does where it matters to a re-run: an existing release or asset is refused
(422) unless the command says what to do; --verify-tag needs the tag on the remote; a second
open pull request for the same branch is refused; without GH_TOKEN (the fake's token) nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from fake_state import FakeError, git, origin, remote_tags, state_dir, token


def _options(args: list[str], valued: set[str]) -> tuple[dict[str, str], list[str]]:
    options, positional, i = {}, [], 0
    while i < len(args):
        if args[i] in valued:
            options[args[i]] = args[i + 1]
            i += 2
        elif args[i].startswith("--"):
            options[args[i]] = ""
            i += 1
        else:
            positional.append(args[i])
            i += 1
    return options, positional


def _repo(options: dict[str, str]) -> str:
    repo = options.get("--repo") or os.environ.get("GH_REPO") or os.environ.get("GITHUB_REPOSITORY", "")
    if not repo:
        raise FakeError("no repository: pass --repo OWNER/REPO")
    return repo


def release(state: Path, args: list[str]) -> int:
    verb, rest = args[0], args[1:]
    options, positional = _options(rest, {"--repo", "--title", "--notes-file", "--notes", "--target"})
    _repo(options)
    tag, files = positional[0], positional[1:]
    folder = state / "github" / "releases" / tag
    if verb == "view":
        if not folder.is_dir():
            raise FakeError("release not found")
        print(json.loads((folder / "release.json").read_text())["title"])
        return 0
    if verb == "create":
        if folder.is_dir():
            raise FakeError(f"HTTP 422: Validation Failed (already_exists: tag_name {tag})")
        if "--verify-tag" in options and tag not in remote_tags(state):
            raise FakeError(f"tag {tag} doesn't exist in the repo, aborting due to --verify-tag flag")
        notes = (
            Path(options["--notes-file"]).read_text()
            if "--notes-file" in options
            else options.get("--notes", "")
        )
        (folder / "assets").mkdir(parents=True)
        (folder / "release.json").write_text(
            json.dumps({"tag": tag, "title": options.get("--title", tag), "notes": notes})
        )
        print(f"https://github.com/{_repo(options)}/releases/tag/{tag}")
        return 0
    if verb == "upload":
        if not folder.is_dir():
            raise FakeError("release not found")
        for name in files:
            asset = folder / "assets" / Path(name).name
            if asset.exists() and "--clobber" not in options:
                raise FakeError(f"asset under the same name already exists: [{asset.name}]")
            shutil.copyfile(name, asset)
        return 0
    raise FakeError(f"gh release {verb} is not modelled")


def _list(pulls: list[dict], options: dict[str, str]) -> int:
    """gh's table (tab-separated when piped), or --json FIELDS with --jq `.[].FIELD` (the one
    jq form modelled)."""
    if "--json" not in options:
        for pull in pulls:
            print(f"{pull['number']}\t{pull['title']}\t{pull['head']}\t{pull['state']}")
        return 0
    fields = options["--json"].split(",")
    rows = [
        {f: pull.get({"headRefName": "head", "baseRefName": "base"}.get(f, f)) for f in fields}
        for pull in pulls
    ]
    jq = options.get("--jq")
    if jq is None:
        print(json.dumps(rows))
    elif (field := jq.removeprefix(".[].")) in fields and jq.startswith(".[]."):
        for row in rows:
            print(row[field])
    else:
        raise FakeError(f"--jq {jq!r} is not modelled (only .[].FIELD of the --json fields)")
    return 0


def pr(state: Path, args: list[str]) -> int:
    verb, rest = args[0], args[1:]
    options, _ = _options(
        rest,
        {
            "--repo",
            "--head",
            "--base",
            "--title",
            "--body",
            "--body-file",
            "--state",
            "--json",
            "--jq",
            "-H",
            "-B",
            "-t",
            "-b",
        },
    )
    _repo(options)
    pulls = state / "github" / "pulls"
    pulls.mkdir(parents=True, exist_ok=True)
    existing = [json.loads(p.read_text()) for p in sorted(pulls.glob("*.json"))]
    head = options.get("--head") or options.get("-H")
    if verb == "list":
        wanted = options.get("--state", "open")
        found = [p for p in existing if (not head or p["head"] == head) and wanted in ("all", p["state"])]
        return _list(found, options)
    if verb != "create":
        raise FakeError(f"gh pr {verb} is not modelled")
    base = options.get("--base") or options.get("-B") or "main"
    if not head:  # gh's default: the branch checked out here
        done = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True)
        head = done.stdout.strip() if done.returncode == 0 else ""
    if not head or head == "HEAD":
        raise FakeError("could not determine the current branch: pass --head")
    branches = git(origin(state), "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    if head not in branches or base not in branches:
        raise FakeError(f"HTTP 422: head {head!r} or base {base!r} is not a branch of the repository")
    if any(p["head"] == head and p["base"] == base and p["state"] == "open" for p in existing):
        raise FakeError(f'a pull request for branch "{head}" into branch "{base}" already exists')
    body = (
        Path(options["--body-file"]).read_text()
        if "--body-file" in options
        else options.get("--body", options.get("-b", ""))
    )
    number = len(existing) + 1
    title = options.get("--title") or options.get("-t") or head
    (pulls / f"{number}.json").write_text(
        json.dumps(
            {"number": number, "head": head, "base": base, "title": title, "body": body, "state": "open"}
        )
    )
    print(f"https://github.com/{_repo(options)}/pull/{number}")
    return 0


def gh(args: list[str]) -> int:
    state = state_dir()
    if (os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")) != token(state):
        raise FakeError(
            "To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable"
        )
    if args[:1] == ["release"]:
        return release(state, args[1:])
    if args[:1] == ["pr"]:
        return pr(state, args[1:])
    raise FakeError(f"gh {' '.join(args[:2])} is not modelled")
