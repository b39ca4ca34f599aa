"""The checkout's git credentials never reach the RAG: rag-ci refuses to start it while they are there.

actions/checkout keeps the job's token for later git commands unless told
`persist-credentials: false`: v1 wrote it into the remote URL
(`https://x-access-token:TOKEN@github.com/...`), v2 to v5 as an
`http.https://github.com/.extraheader` in `.git/config`, and v6 on in a
`git-credentials-<uuid>.config` under `$RUNNER_TEMP` that `.git/config` includes
(`includeIf.gitdir:<the checkout's .git>.path`, and the same for the container
paths, `/github/workspace/.git` -> `/github/runner_temp/...`, which a Docker
action sees mounted). GitLab puts its job token in the remote URL too. The RAG
under test is the pull request's code: it can read the checkout, follow the
include, and push with that token. rag-ci needs no git credentials (its REST
calls use the `github-token` input), so the run stops before any build step
with exit 2 and says how to check out without them.

The git config files are read as git reads them, includes followed whatever their
condition (a condition that does not hold here may hold for the RAG's git). A
credential's value is never quoted: only the file and the key are named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rag_ci.errors import RagCiError

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_SUBSECTION_OLD = re.compile(r"^([A-Za-z0-9-]+)\.(.+)$")  # [http.https://github.com/] (deprecated form)
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
# user:password@ in a URL: a password (or token) in a remote's or an insteadOf's URL.
_URL_CREDENTIAL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
_MAX_INCLUDES = 32  # git itself stops at 10 levels; a loop must end


@dataclass(frozen=True)
class CredentialFound:
    """Where a credential is: the file, and the key that holds it (never its value)."""

    file: Path
    key: str
    via: Path | None = None  # the config file that includes `file`


def _entries(text: str):
    """(section, subsection, key, value) of each entry of a git config file, keys lower-case."""
    section, subsection = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            match = _SECTION.match(line)
            if not match:
                continue
            section, subsection = match[1].lower(), match[2]
            if subsection is None and (old := _SUBSECTION_OLD.match(match[1])):
                section, subsection = old[1].lower(), old[2]
            line = match[3].strip()  # `[core] bare = false` on one line
            if not line:
                continue
        entry = _ENTRY.match(line)
        if entry:
            yield section, subsection, entry[1].lower(), (entry[2] or "").strip().strip('"')


def _credential_key(section: str, subsection: str | None, key: str, value: str) -> str | None:
    """The entry's name when it holds a credential; a password in the name itself is masked."""
    shown = _URL_CREDENTIAL.sub(lambda m: m[0].split("://", 1)[0] + "://***@", subsection or "")
    name = f"{section}.{shown}.{key}" if subsection is not None else f"{section}.{key}"
    if section == "http" and key == "extraheader" and value:
        return name
    if _URL_CREDENTIAL.search(value) or shown != (subsection or ""):  # [url "https://u:t@host/"] insteadOf
        return name
    return None


def _include_paths(config: Path, text: str) -> list[Path]:
    paths = []
    for section, _subsection, key, value in _entries(text):
        if section in ("include", "includeif") and key == "path" and value:
            path = Path(value).expanduser()
            paths.append(path if path.is_absolute() else config.parent / path)
    return paths


def credentials_in_config(config: Path) -> list[CredentialFound]:
    """The credentials a git config file carries, in itself or in the files it includes."""
    found: list[CredentialFound] = []
    queue: list[tuple[Path, Path | None]] = [(config, None)]
    seen: set[Path] = set()
    while queue and len(seen) < _MAX_INCLUDES:
        path, via = queue.pop(0)
        try:
            resolved = path.resolve()
            if resolved in seen or not path.is_file():
                continue
            seen.add(resolved)
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:  # unreadable to rag-ci (or a host path the container does not have)
            continue
        for section, subsection, key, value in _entries(text):
            if name := _credential_key(section, subsection, key, value):
                found.append(CredentialFound(path, name, via))
        queue += [(included, path) for included in _include_paths(path, text)]
    return found


def _git_dir(worktree: Path) -> Path | None:
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a worktree or a submodule: `gitdir: <path>`
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (worktree / target)
    return None


def _config_files(git_dir: Path) -> list[Path]:
    files = [git_dir / "config", git_dir / "config.worktree"]
    common = git_dir / "commondir"
    if common.is_file():  # a linked worktree: the main repository's config applies too
        base = Path(common.read_text(encoding="utf-8", errors="replace").strip())
        files.append((base if base.is_absolute() else git_dir / base) / "config")
    modules = git_dir / "modules"
    if modules.is_dir():  # submodules: checkout writes their includes as well
        files += sorted(modules.rglob("config"))
    return files


def credentials_in_checkout(folder: Path) -> list[CredentialFound]:
    """Every credential the git configuration of the checkout holding `folder` carries."""
    folder = folder.resolve()
    found: list[CredentialFound] = []
    for worktree in (folder, *folder.parents):
        git_dir = _git_dir(worktree)
        if git_dir is None:
            continue
        for config in _config_files(git_dir):
            found += credentials_in_config(config)
        store = worktree / ".git-credentials"  # `credential.helper store --file .git-credentials`
        if store.is_file():
            found.append(CredentialFound(store, "a stored credential"))
        break
    return found


def refuse_persisted_credentials(folder: Path) -> None:
    """Exit 2 (a RagCiError) when the checkout holding `folder` keeps git credentials the RAG could read."""
    found = credentials_in_checkout(folder)
    if not found:
        return
    where = "; ".join(f"{f.key} in {f.file}" + (f" (included by {f.via})" if f.via else "") for f in found[:4])
    raise RagCiError(
        f"the checkout keeps a git credential the RAG under test could read and use ({where}). "
        "rag-ci does not start the RAG next to it: check out with `persist-credentials: false` "
        "(actions/checkout: `with: {persist-credentials: false}`), or remove the credential before rag-ci runs "
        "(GitLab CI: `sed -i -E 's#(://)[^/@]*@#\\1#' .git/config`, as examples/.gitlab-ci.yml does). "
        "rag-ci itself needs no git credentials: its GitHub calls use the `github-token` input."
    )
