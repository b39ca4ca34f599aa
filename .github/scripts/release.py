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
  rehearse VERSION --dist DIR [--no-isolation]
                                     all of the above, on a copy of action.yml, with a made-up digest

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
# Where a user is told which version to use, and the pattern that finds the version there.
STATED = {
    "rag_ci/__init__.py": r'__version__ = "(\d+\.\d+\.\d+)"',
    "action.yml": r"# rag-ci (\d+\.\d+\.\d+):",
    "README.md": r"(?:ghcr\.io/rag-ci/rag-ci:v|rag-ci/rag-ci@v|rag-ci==)(\d+\.\d+\.\d+)",
    "docs/*.md": r"(?:ghcr\.io/rag-ci/rag-ci:v|rag-ci/rag-ci@v|rag-ci==)(\d+\.\d+\.\d+)",
    "examples/Jenkinsfile": r"ghcr\.io/rag-ci/rag-ci:v(\d+\.\d+\.\d+)",
    "examples/.gitlab-ci.yml": r"ghcr\.io/rag-ci/rag-ci:v(\d+\.\d+\.\d+)",
}
REQUIRED_LABELS = ("org.opencontainers.image.title", "org.opencontainers.image.version", "org.opencontainers.image.source",
                   "org.opencontainers.image.revision", "org.opencontainers.image.licenses", "org.opencontainers.image.description")


class ReleaseError(Exception):
    """A release step cannot go on; the message says why."""


def version_of(text: str) -> str:
    if not SEMVER.fullmatch(text):  # the tags add the v: v1.2.3 and v1
        raise ReleaseError(f"version must look like 1.2.3 (no v), not {text!r}")
    return text


def stated_versions(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, version) for every place a version of rag-ci is stated."""
    found = [("pyproject.toml", 0, tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"])]
    for pattern, regex in STATED.items():
        for path in sorted(root.glob(pattern)):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found += [(path.relative_to(root).as_posix(), number, v) for v in re.findall(regex, line, flags=re.ASCII)]
    return found


def check(version: str, root: Path = ROOT) -> None:
    stated = stated_versions(root)
    wrong = [f"{name}:{line} says {v}" for name, line, v in stated if v != version]
    if wrong:
        raise ReleaseError(f"not every place says {version}: " + "; ".join(wrong))
    for must in ("rag_ci/__init__.py", "action.yml"):
        if not any(name == must for name, _, _ in stated):
            raise ReleaseError(f"{must} states no version (expected {STATED[must]!r})")
    notes(version, root)


def notes(version: str, root: Path = ROOT) -> str:
    text = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    match = re.search(rf"^## \[{re.escape(version)}\][^\n]*\n(.*?)(?=^## |^\[[^\]]+\]: |\Z)", text, flags=re.M | re.S)
    if not match or not match[1].strip():
        raise ReleaseError(f"CHANGELOG.md has no section `## [{version}] - YYYY-MM-DD` with notes")
    return match[1].strip() + "\n"


def _run(*command: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReleaseError(f"{' '.join(command[:4])} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def build(version: str, dist: Path, *, isolation: bool = True, root: Path = ROOT) -> list[Path]:
    if dist.exists():
        shutil.rmtree(dist)
    _run(sys.executable, "-m", "build", *([] if isolation else ["--no-isolation"]), "--outdir", str(dist), str(root))
    built = sorted(dist.iterdir())
    wheels = [p for p in built if p.name == f"rag_ci-{version}-py3-none-any.whl"]
    sdists = [p for p in built if p.name == f"rag_ci-{version}.tar.gz"]
    if not (wheels and sdists) or len(built) != 2:
        raise ReleaseError(f"expected rag_ci-{version}-py3-none-any.whl and rag_ci-{version}.tar.gz, built {[p.name for p in built]}")
    _run(sys.executable, "-m", "twine", "check", "--strict", *map(str, built))
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    package = {p.relative_to(root).as_posix() for p in (root / "rag_ci").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    if missing := sorted(package - names):
        raise ReleaseError(f"the wheel lacks files of rag_ci/: {', '.join(missing[:5])}")
    if not any(n.startswith("rag_ci/templates/") for n in names):
        raise ReleaseError("the wheel holds no templates")
    return built


def declared_labels(dockerfile: str, args: dict[str, str]) -> dict[str, str]:
    """The LABELs of the Dockerfile's last stage, its ARGs replaced by `args` (or their defaults)."""
    text = re.sub(r"\\\n\s*", " ", dockerfile)
    last_stage = text[text.rindex("\nFROM "):] if "\nFROM " in text else text
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
    expected = {"org.opencontainers.image.version": version, "org.opencontainers.image.source": source,
                "org.opencontainers.image.revision": revision, "org.opencontainers.image.licenses": license_}
    if wrong := [f"{k}={found[k]!r} (expected {v!r})" for k, v in expected.items() if found[k] != v]:
        raise ReleaseError("the image's labels would be wrong: " + "; ".join(wrong))
    return [f"{name}={value}" for name, value in args.items()]


def pin_action(version: str, image: str, digest: str, action: Path) -> str:
    if not DIGEST.fullmatch(digest):
        raise ReleaseError(f"not an image digest: {digest!r} (expected sha256: and 64 hex digits)")
    if not re.fullmatch(r"ghcr\.io/[a-z0-9._-]+/[a-z0-9._-]+", image):
        raise ReleaseError(f"not a GHCR image name (lower case, no tag): {image!r}")
    text = action.read_text(encoding="utf-8")
    pinned, count = re.subn(r"^  image: Dockerfile$", f"  image: docker://{image}@{digest}  # v{version}", text, flags=re.M)
    if count != 1:
        raise ReleaseError(f"{action.name}: expected one `  image: Dockerfile` line to replace, found {count}")
    action.write_text(pinned, encoding="utf-8")
    return pinned


def rehearse(version: str, dist: Path, *, isolation: bool) -> None:
    check(version)
    notes_file = dist.parent / "release-notes.md"
    build(version, dist, isolation=isolation)
    notes_file.write_text(notes(version), encoding="utf-8")
    labels(version, "https://github.com/rag-ci/rag-ci", "0" * 40)
    action = dist.parent / "action.yml"
    shutil.copy(ROOT / "action.yml", action)
    pin_action(version, "ghcr.io/rag-ci/rag-ci", "sha256:" + "0" * 64, action)
    print(f"release: rehearsed {version}: {', '.join(p.name for p in sorted(dist.iterdir()))}, {notes_file.name}, {action.name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="release.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    for name in ("check", "notes", "build", "labels", "pin-action", "rehearse"):
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
        if name == "pin-action":
            step.add_argument("image")
            step.add_argument("digest")
            step.add_argument("--action", type=Path, default=ROOT / "action.yml")
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
        else:
            rehearse(version, args.dist, isolation=not args.no_isolation)
    except (ReleaseError, OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
