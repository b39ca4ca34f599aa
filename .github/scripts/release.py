#!/usr/bin/env python3
"""The steps of a release that need no registry: .github/workflows/release.yml calls them, and
tests/integration/test_release.py rehearses them on a developer's machine (everything but the pushes).

  check VERSION                      every place the version is stated says VERSION; CHANGELOG.md has its section
  notes VERSION [--output FILE]      the release notes: CHANGELOG.md's section for VERSION
  build VERSION --dist DIR [--no-isolation]
                                     python -m build, twine check --strict, and the wheel holds every file of rag_ci/
  labels VERSION --source URL --revision SHA
                                     the image's OCI labels as the Dockerfile declares them, checked, as --build-arg lines
  pin-action VERSION IMAGE DIGEST [--action FILE]
                                     action.yml runs the pushed image by digest: `image: docker://IMAGE@sha256:…  # vX.Y.Z`
  stamp-action VERSION REPOSITORY SHA [--root DIR]
                                     the wheel's `rag-ci init` pins REPOSITORY@SHA  # vX.Y.Z (the tagged commit)
  release-commit VERSION IMAGE DIGEST [--repo DIR] [--bundle FILE]
                                     pin-action, then commit it in DIR (a checkout): the commit the tags will name; prints
                                     its sha; --bundle: that one commit as a git bundle (its parent, the checked-out
                                     commit, is the prerequisite), for the tag job to push
  rehearse VERSION --dist DIR [--no-isolation]
                                     the release's order without registries, in a clone under DIR's folder:
                                     check, the release commit (a made-up digest), the wheel stamped with its
                                     sha, built from it, the labels, the notes, the tags (local, never pushed)

Standard library only (the workflow's python has nothing else before `pip install build twine`).
Every failure is one line `release: …` on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEMVER = re.compile(r"\d+\.\d+\.\d+", re.ASCII)  # ASCII: `\d` alone matches "١" and "٣" too
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
DISTRIBUTION = "rag-ci-gate"  # the PyPI name; the import package is rag_ci, the command rag-ci
# Where a user is told which version to use, and the pattern that finds the version there:
# the image's tag, the action's tag, the image digest's `# vX.Y.Z` comment, a pinned
# `rag-ci-gate==` and a pre-commit `rev:`. Not the action's commit pin (`rag-ci/rag-ci@<sha>
# # vX.Y.Z`): it names the newest release until this one is tagged (release_pins.py checks it).
USER_FACING = (
    r"(?:ghcr\.io/rag-ci/rag-ci:v|rag-ci/rag-ci@v|rag-ci@(?![0-9a-f]{40}\s)[^`\n]*?#\s*v|"
    r"rag-ci-gate(?:\[[^\]]*\])?==|^\s*#?\s*rev:\s*v)(\d+\.\d+\.\d+)"
)
STATED = {
    "rag_ci/__init__.py": r'__version__ = "(\d+\.\d+\.\d+)"',
    "action.yml": r"# rag-ci (\d+\.\d+\.\d+):",
}
# The files users copy lines from: every version stated there must be the release's, and
# every install line there must name DISTRIBUTION (`pip install rag-ci` installs another project).
DOCUMENTS = ("README.md", "docs/**/*.md", "examples/**/*", ".pre-commit-hooks.yaml", "action.yml")
INSTALLER = re.compile(
    r"\b(pip3? install|pipx install|pipx run|uvx|uv tool install|uv tool run|uv pip install|uv add)\s+([^\n`#;|&)]*)"
)
RAG_CI_LIKE = re.compile(
    r"""^['"]?(rag[-_.]?ci(?:[-_.][a-z0-9]+)*)(?:\[[^\]]*\])?(?:[=<>~!]=?[^'"]*)?['"]?$""", re.I
)
REQUIRED_LABELS = (
    "org.opencontainers.image.title",
    "org.opencontainers.image.version",
    "org.opencontainers.image.source",
    "org.opencontainers.image.revision",
    "org.opencontainers.image.licenses",
    "org.opencontainers.image.description",
)


class ReleaseError(Exception):
    """A release step cannot go on; the message says why."""


def version_of(text: str) -> str:
    if not SEMVER.fullmatch(text):  # the tags add the v: v1.2.3 and v1
        raise ReleaseError(f"version must look like 1.2.3 (no v), not {text!r}")
    return text


def documents(root: Path) -> list[tuple[str, list[str]]]:
    """(file, lines) of every document users copy from; action.yml's comments only."""
    found = []
    for pattern in DOCUMENTS:
        for path in sorted(root.glob(pattern)):
            if not path.is_file() or path.suffix in (".json", ".py", ".pyc") or "__pycache__" in path.parts:
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            if path.name == "action.yml":
                lines = [line if line.lstrip().startswith("#") else "" for line in lines]
            found.append((path.relative_to(root).as_posix(), lines))
    return found


def stated_versions(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, version) for every place a version of rag-ci is stated."""
    found = [
        ("pyproject.toml", 0, tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"])
    ]
    for pattern, regex in STATED.items():
        for path in sorted(root.glob(pattern)):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found += [
                    (path.relative_to(root).as_posix(), number, v)
                    for v in re.findall(regex, line, flags=re.ASCII)
                ]
    for name, lines in documents(root):
        for number, line in enumerate(lines, 1):
            found += [(name, number, v) for v in re.findall(USER_FACING, line, flags=re.ASCII)]
    return found


def installed_names(line: str) -> list[str]:
    """The rag-ci-like distributions an install line names (`pip install "rag-ci[x]==1"` -> rag-ci)."""
    names = []
    for verb, rest in INSTALLER.findall(line):
        words = rest.split()
        if verb in ("pipx run", "uvx", "uv tool run"):  # the package, then the command and its arguments
            spec = [w for i, w in enumerate(words) if i and words[i - 1] in ("--from", "--spec", "--with")]
            words = spec or [w for w in words if not w.startswith("-")][:1]
        names += [m[1] for w in words if not w.startswith("-") and (m := RAG_CI_LIKE.match(w))]
    return names


def wrong_installs(root: Path) -> list[str]:
    return [
        f"{name}:{number} installs {dist!r}"
        for name, lines in documents(root)
        for number, line in enumerate(lines, 1)
        for dist in installed_names(line)
        if dist != DISTRIBUTION
    ]


def check(version: str, root: Path = ROOT) -> None:
    stated = stated_versions(root)
    wrong = [f"{name}:{line} says {v}" for name, line, v in stated if v != version]
    if wrong:
        raise ReleaseError(f"not every place says {version}: " + "; ".join(wrong))
    if strangers := wrong_installs(root):
        raise ReleaseError(
            f"install lines must name {DISTRIBUTION} (`rag-ci` on PyPI is another project): "
            + "; ".join(strangers)
        )
    for must in ("rag_ci/__init__.py", "action.yml"):
        if not any(name == must for name, _, _ in stated):
            raise ReleaseError(f"{must} states no version (expected {STATED[must]!r})")
    if (name := tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"]) != DISTRIBUTION:
        raise ReleaseError(f"pyproject.toml names the distribution {name!r}, not {DISTRIBUTION!r}")
    notes(version, root)


def notes(version: str, root: Path = ROOT) -> str:
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(
        rf"^## \[{re.escape(version)}\][^\n]*\n(.*?)(?=^## |^\[[^\]]+\]: |\Z)", text, flags=re.M | re.S
    )
    if not match or not match[1].strip():
        raise ReleaseError(f"CHANGELOG.md has no section `## [{version}] - YYYY-MM-DD` with notes")
    return match[1].strip() + "\n"


def _run(*command: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReleaseError(
            f"{' '.join(command[:4])} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}"
        )
    return done.stdout


def build(version: str, dist: Path, *, isolation: bool = True, root: Path = ROOT) -> list[Path]:
    if dist.exists():
        shutil.rmtree(dist)
    _run(
        sys.executable,
        "-m",
        "build",
        *([] if isolation else ["--no-isolation"]),
        "--outdir",
        str(dist),
        str(root),
    )
    built = sorted(dist.iterdir())
    wheels = [p for p in built if p.name == f"rag_ci_gate-{version}-py3-none-any.whl"]
    sdists = [p for p in built if p.name == f"rag_ci_gate-{version}.tar.gz"]
    if not (wheels and sdists) or len(built) != 2:
        raise ReleaseError(
            f"expected rag_ci_gate-{version}-py3-none-any.whl and rag_ci_gate-{version}.tar.gz, built {[p.name for p in built]}"
        )
    _run(sys.executable, "-m", "twine", "check", "--strict", *map(str, built))
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    package = {
        p.relative_to(root).as_posix()
        for p in (root / "rag_ci").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    if missing := sorted(package - names):
        raise ReleaseError(f"the wheel lacks files of rag_ci/: {', '.join(missing[:5])}")
    if not any(n.startswith("rag_ci/templates/") for n in names):
        raise ReleaseError("the wheel holds no templates")
    return built


def declared_labels(dockerfile: str, args: dict[str, str]) -> dict[str, str]:
    """The LABELs of the Dockerfile's last stage, its ARGs replaced by `args` (or their defaults)."""
    text = re.sub(r"\\\n\s*", " ", dockerfile)
    last_stage = text[text.rindex("\nFROM ") :] if "\nFROM " in text else text
    defaults = dict(re.findall(r"^ARG (\w+)=?(\S*)", last_stage, flags=re.M))
    values = {**defaults, **args}
    labels = {}
    for line in re.findall(r"^LABEL (.+)$", last_stage, flags=re.M):
        for key, value in re.findall(r'([\w.\-]+)="([^"]*)"', line):
            labels[key] = re.sub(r"\$\{(\w+)\}", lambda m: values.get(m[1], ""), value)
    return labels


def labels(version: str, source: str, revision: str, root: Path = ROOT) -> list[str]:
    args = {"RAG_CI_VERSION": version, "RAG_CI_SOURCE": source, "RAG_CI_REVISION": revision}
    found = declared_labels((root / "Dockerfile").read_text(encoding="utf-8"), args)
    if missing := [key for key in REQUIRED_LABELS if not found.get(key)]:
        raise ReleaseError(f"the Dockerfile declares no (or an empty) {', '.join(missing)}")
    license_ = tomllib.loads((root / "pyproject.toml").read_text())["project"]["license"]
    expected = {
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.source": source,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.licenses": license_,
    }
    if wrong := [f"{k}={found[k]!r} (expected {v!r})" for k, v in expected.items() if found[k] != v]:
        raise ReleaseError("the image's labels would be wrong: " + "; ".join(wrong))
    return [f"{name}={value}" for name, value in args.items()]


def pin_action(version: str, image: str, digest: str, action: Path) -> str:
    if not DIGEST.fullmatch(digest):
        raise ReleaseError(f"not an image digest: {digest!r} (expected sha256: and 64 hex digits)")
    if not re.fullmatch(r"ghcr\.io/[a-z0-9._-]+/[a-z0-9._-]+", image):
        raise ReleaseError(f"not a GHCR image name (lower case, no tag): {image!r}")
    text = action.read_text(encoding="utf-8")
    pinned, count = re.subn(
        r"^  image: Dockerfile$", f"  image: docker://{image}@{digest}  # v{version}", text, flags=re.M
    )
    if count != 1:
        raise ReleaseError(
            f"{action.name}: expected one `  image: Dockerfile` line to replace, found {count}"
        )
    action.write_text(pinned, encoding="utf-8")
    return pinned


RELEASED_ACTION = "rag_ci/templates/workflows/released-action.txt"


def stamp_action(version: str, repository: str, sha: str, root: Path = ROOT) -> str:
    """What `rag-ci init` writes as `uses:`: the release's commit, by sha, with its version."""
    if not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise ReleaseError(f"not a commit sha: {sha!r} (40 lower-case hex digits)")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise ReleaseError(f"not OWNER/REPO: {repository!r}")
    line = f"{repository}@{sha} # v{version}"
    (root / RELEASED_ACTION).write_text(line + "\n", encoding="utf-8")
    return line


BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")


def release_commit(version: str, image: str, digest: str, repo: Path, bundle: Path | None = None) -> str:
    """The commit vX.Y.Z and vX will name: main's tree, action.yml running the image by digest."""
    pin_action(version, image, digest, repo / "action.yml")
    git = ["git", "-C", str(repo), "-c", f"user.name={BOT[0]}", "-c", f"user.email={BOT[1]}"]
    _run(
        *git,
        "commit",
        "-q",
        "-m",
        f"Release v{version}: the action runs {image}@{digest}",
        "action.yml",
        cwd=repo,
    )
    if bundle is not None:  # HEAD^..HEAD: a shallow checkout holds the parent, nothing older
        _run("git", "-C", str(repo), "bundle", "create", str(bundle.resolve()), "HEAD^..HEAD", cwd=repo)
    return _run("git", "-C", str(repo), "rev-parse", "HEAD", cwd=repo).strip()


def rehearse(
    version: str, dist: Path, *, isolation: bool, repository: str = "rag-ci/rag-ci"
) -> dict[str, str]:
    """release.yml's order on this machine, every registry left out (no image is built: a made-up digest)."""
    check(version)
    work = dist.parent
    checkout = work / "release-checkout"
    if checkout.exists():
        shutil.rmtree(checkout)
    # the committed tree, as CI checks it out
    _run("git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(checkout))
    image, digest = f"ghcr.io/{repository}", "sha256:" + "0" * 64
    labels(
        version,
        f"https://github.com/{repository}",
        _run("git", "-C", str(checkout), "rev-parse", "HEAD").strip(),
        checkout,
    )
    base = _run("git", "-C", str(checkout), "rev-parse", "HEAD").strip()
    _run("git", "-C", str(checkout), "branch", "release-base", base)  # what the tag job checks out
    sha = release_commit(version, image, digest, checkout, bundle=work / "release.bundle")
    stamped = stamp_action(version, repository, sha, checkout)
    built = build(version, dist, isolation=isolation, root=checkout)
    wheel = next(p for p in built if p.suffix == ".whl")
    if zipfile.ZipFile(wheel).read(RELEASED_ACTION).decode().strip() != stamped:
        raise ReleaseError(f"{wheel.name} does not pin {stamped}")
    (work / "release-notes.md").write_text(notes(version, checkout), encoding="utf-8")
    tag_from_bundle(version, sha, base, work)
    print(
        f"release: rehearsed {version}: commit {sha} (tags v{version}, v{version.split('.')[0]}, not pushed), "
        f"{', '.join(p.name for p in built)} pinning {stamped}, release-notes.md"
    )
    return {"sha": sha, "stamped": stamped}


def tag_from_bundle(version: str, sha: str, base: str, work: Path) -> Path:
    """The tag job without its push: a checkout of the base commit fetches the bundle, checks the
    sha and tags it vX.Y.Z and vX (in work/tagged)."""
    tagged = work / "tagged"
    if tagged.exists():
        shutil.rmtree(tagged)
    # as actions/checkout leaves it: the base commit alone (depth 1), which the bundle needs and nothing else
    _run(
        "git",
        "clone",
        "--quiet",
        "--depth",
        "1",
        f"file://{work / 'release-checkout'}",
        str(tagged),
        "--branch",
        "release-base",
    )
    _run("git", "-C", str(tagged), "fetch", "-q", str(work / "release.bundle"), "HEAD")
    if (fetched := _run("git", "-C", str(tagged), "rev-parse", "FETCH_HEAD").strip()) != sha or _run(
        "git", "-C", str(tagged), "rev-parse", "FETCH_HEAD^"
    ).strip() != base:
        raise ReleaseError(f"the bundle holds {fetched}, not the release commit {sha} on {base}")
    git = ["git", "-C", str(tagged), "-c", f"user.name={BOT[0]}", "-c", f"user.email={BOT[1]}"]
    _run(*git, "tag", "-f", "-a", f"v{version}", "-m", f"rag-ci {version}", sha)
    _run(*git, "tag", "-f", f"v{version.split('.')[0]}", sha)
    return tagged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    for name in (
        "check",
        "notes",
        "build",
        "labels",
        "pin-action",
        "release-commit",
        "stamp-action",
        "rehearse",
    ):
        step = sub.add_parser(name)
        step.add_argument("version")
        if name == "notes":
            step.add_argument("--output", type=Path)
        if name in ("build", "rehearse"):
            step.add_argument("--dist", type=Path, required=True)
            step.add_argument("--no-isolation", action="store_true")
        if name == "labels":
            step.add_argument("--source", required=True)
            step.add_argument("--revision", required=True)
        if name == "stamp-action":
            step.add_argument("repository")
            step.add_argument("sha")
            step.add_argument("--root", type=Path, default=ROOT)
        if name in ("pin-action", "release-commit"):
            step.add_argument("image")
            step.add_argument("digest")
        if name == "pin-action":
            step.add_argument("--action", type=Path, default=ROOT / "action.yml")
        if name == "release-commit":
            step.add_argument("--repo", type=Path, default=Path.cwd())
            step.add_argument("--bundle", type=Path)
    args = parser.parse_args(argv)
    try:
        version = version_of(args.version)
        if args.step == "check":
            check(version)
            print(f"release: every place says {version}")
        elif args.step == "notes":
            text = notes(version)
            args.output.write_text(text, encoding="utf-8") if args.output else sys.stdout.write(text)
        elif args.step == "build":
            print("\n".join(str(p) for p in build(version, args.dist, isolation=not args.no_isolation)))
        elif args.step == "labels":
            print("\n".join(labels(version, args.source, args.revision)))
        elif args.step == "pin-action":
            pin_action(version, args.image, args.digest, args.action)
            print(f"release: {args.action.name} runs {args.image}@{args.digest} (v{version})")
        elif args.step == "release-commit":
            print(release_commit(version, args.image, args.digest, args.repo, args.bundle))
        elif args.step == "stamp-action":
            print(f"release: rag-ci init pins {stamp_action(version, args.repository, args.sha, args.root)}")
        else:
            rehearse(version, args.dist, isolation=not args.no_isolation)
    except (ReleaseError, OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
