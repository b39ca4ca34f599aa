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

Every repository between the RAG's folder and the filesystem root is checked (a second
checkout with `path:` or a submodule is a repository inside the workspace's), every
repository below it (a second checkout with `path: corpora/docs` inside the RAG's folder:
git_places.py), the global git configs of the HOME the RAG gets (`~/.gitconfig`,
`$XDG_CONFIG_HOME/git/config`: a step's `url."https://x-access-token:…@github.com/".insteadOf`),
and the git configuration the RAG's environment carries (`GIT_CONFIG_*`). Only what gives
access counts: a credential-bearing header (not a proxy's or LFS's plain header, nor one
cleared by a later empty value), a password or a token as user name in a URL, a `store`
helper with a stored credential, an inline helper that prints a password.

The git config files are read as git reads them, includes followed whatever their
condition (a condition that does not hold here may hold for the RAG's git). A
credential's value is never quoted: only the file and the key are named.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from rag_ci.errors import RagCiError
from rag_ci.files.bounded_read import read_head
from rag_ci.safety.redaction import looks_like_credential
from rag_ci.targets.git_places import home_git_configs, repositories_below

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_SUBSECTION_OLD = re.compile(r"^([A-Za-z0-9-]+)\.(.+)$")  # [http.https://github.com/] (deprecated form)
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
# user:password@ in a URL: a password (or token) in a remote's or an insteadOf's URL.
_URL_CREDENTIAL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")
# user@ alone: a credential when the user name is a token (`https://ghs_…@github.com/`).
_URL_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/@\s:]+)@")
_TOKEN_PREFIXES = ("ghp_", "ghs_", "gho_", "ghu_", "ghr_", "github_pat_", "glpat-", "gldt-", "glcbt-")
# A header that carries a credential by its name; any other header only when its value looks like one.
_CREDENTIAL_HEADERS = re.compile(
    r"^\s*(authorization|proxy-authorization|private-token|job-token|deploy-token|x-api-key|api-key|cookie"
    r"|x-[a-z-]*(token|key|secret|auth)[a-z-]*)\s*:",
    re.I,
)
_MAX_INCLUDES = 32  # git itself stops at 10 levels; a loop must end
_MAX_CONFIG_BYTES = 1 << 20  # a git config is a few kB; a bigger "config" is not read whole


@dataclass(frozen=True)
class CredentialFound:
    """Where a credential is: the file, and the key that holds it (never its value)."""

    file: Path
    key: str
    via: Path | None = None  # the config file that includes `file`
    checkout: Path | None = None  # the worktree of the repository whose configuration holds it
    home: bool = False  # in a global git config of the RAG's HOME


def _entries(text: str):
    """(section, subsection, key, value) of each entry of a git config file, keys lower-case."""
    section, subsection = "", None
    for raw in text.removeprefix("\ufeff").splitlines():  # git skips a UTF-8 byte-order mark
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


def _token_user(text: str) -> bool:
    """A URL whose user name is itself a token (no password needed to use it)."""
    return any(
        user.lower().startswith(_TOKEN_PREFIXES) or looks_like_credential(user)
        for user in _URL_USER.findall(text)
    )


def _masked(text: str) -> str:
    text = _URL_CREDENTIAL.sub(lambda m: m[0].split("://", 1)[0] + "://***@", text)
    return _URL_USER.sub(lambda m: m[0].split("://", 1)[0] + "://***@" if _token_user(m[0]) else m[0], text)


def _in_url(text: str) -> bool:
    return bool(_URL_CREDENTIAL.search(text)) or _token_user(text)


def credential_header(value: str) -> bool:
    """A `http.extraHeader` value that carries a credential: by the header's name
    (Authorization, Private-Token...), or by a value that looks like one."""
    if _CREDENTIAL_HEADERS.match(value):
        return True
    _, _, rest = value.partition(":")
    return any(looks_like_credential(word) for word in rest.split())


def _helper_credential(value: str) -> bool:
    """A credential helper that hands out a stored secret: `store` with a file that holds
    one, or an inline helper (`!f() { echo password=…; }; f`) that prints a password."""
    if value.startswith("!"):
        return bool(re.search(r"password\s*=|\btoken\b", value, re.I))
    words = value.split()
    if not words or words[0] != "store":
        return False
    files = [w.split("=", 1)[1] for w in words if w.startswith("--file=")]
    files += [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--file"]
    if not files:
        xdg = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
        files = ["~/.git-credentials", f"{xdg}/git/credentials"]
    return any(_non_empty(Path(f).expanduser()) for f in files)


def _non_empty(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def _name(section: str, subsection: str | None, key: str) -> str:
    return f"{section}.{_masked(subsection)}.{key}" if subsection is not None else f"{section}.{key}"


def _read(path: Path) -> str | None:
    """A regular file's first _MAX_CONFIG_BYTES; None when missing, unreadable to rag-ci (or a
    host path the container does not have), or not a regular file (a FIFO would block)."""
    data = read_head(path, _MAX_CONFIG_BYTES)
    return None if data is None else data.decode("utf-8", errors="replace")


def _expanded(config: Path) -> Iterator[tuple[Path, Path | None, str, str | None, str, str]]:
    """(file, via, section, subsection, key, value) in git's order: an include's entries at
    the place of the include, whatever its condition (it may hold for the RAG's git)."""
    seen: set[Path] = set()

    def walk(path: Path, via: Path | None):
        resolved = path.resolve()
        if resolved in seen or len(seen) >= _MAX_INCLUDES:
            return
        text = _read(path)
        if text is None:
            return
        seen.add(resolved)
        for section, subsection, key, value in _entries(text):
            yield path, via, section, subsection, key, value
            if section in ("include", "includeif") and key == "path" and value:
                included = Path(value).expanduser()
                yield from walk(included if included.is_absolute() else path.parent / included, path)

    yield from walk(config, None)


def credentials_in_config(config: Path) -> list[CredentialFound]:
    """The credentials a git config file carries, in itself or in the files it includes.

    Headers and helpers are lists in git: an empty value clears what came before it,
    so a header cleared later is no longer there."""
    found: dict[tuple, CredentialFound] = {}
    for n, (path, via, section, subsection, key, value) in enumerate(_expanded(config)):
        name = _name(section, subsection, key)
        if (section, key) in (("http", "extraheader"), ("credential", "helper")):
            if not value:  # `http.extraHeader=` clears the headers (all of them, without a URL)
                found = {
                    k: f
                    for k, f in found.items()
                    if not (k[0] == (section, key) and (subsection is None or k[1] == subsection))
                }
                continue
            holds = credential_header(value) if key == "extraheader" else _helper_credential(value)
        else:
            holds = _in_url(value) or _in_url(subsection or "")  # [url "https://u:t@host/"] insteadOf
        if holds:
            found[((section, key), subsection, n)] = CredentialFound(path, name, via)
    return list(found.values())


def _git_dir(worktree: Path) -> Path | None:
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a worktree or a submodule: `gitdir: <path>`
        text = (_read(dot_git) or "").removeprefix("\ufeff").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (worktree / target)
    return None


def _config_files(git_dir: Path) -> list[Path]:
    files = [git_dir / "config", git_dir / "config.worktree"]
    common = git_dir / "commondir"
    if common.is_file():  # a linked worktree: the main repository's config applies too
        base = Path((_read(common) or "").strip())
        files.append((base if base.is_absolute() else git_dir / base) / "config")
    modules = git_dir / "modules"
    if modules.is_dir():  # submodules: checkout writes their includes as well
        files += sorted(modules.rglob("config"))
    return files


def credentials_in_checkout(folder: Path) -> list[CredentialFound]:
    """Every credential the git configuration of every repository holding `folder`, or
    below it, carries.

    Not only the nearest one: the RAG's folder may be its own repository (a second
    actions/checkout with `path:`, a submodule) inside the workspace's checkout, or hold
    one (a checkout with `path: corpora/docs`), whose `.git/config` the RAG reads just as well."""
    folder = folder.resolve()
    found: list[CredentialFound] = []
    configs: dict[Path, tuple[Path, Path]] = {}  # resolved config -> (config, its worktree)
    for worktree in (folder, *folder.parents, *repositories_below(folder)):
        git_dir = _git_dir(worktree)
        if git_dir is None:
            continue
        for config in _config_files(git_dir):
            configs.setdefault(config.resolve(), (config, worktree))
        # `credential.helper store --file .git-credentials` in a checkout (not a home folder's
        # own ~/.git-credentials, which only a `store` helper of the checkout hands out).
        store = worktree / ".git-credentials"
        if _non_empty(store):
            found.append(CredentialFound(store, "a stored credential", checkout=worktree))
    for config, worktree in configs.values():
        found += [replace(f, checkout=worktree) for f in credentials_in_config(config)]
    return found


def credentials_in_home(folder: Path, env: Mapping[str, str]) -> list[CredentialFound]:
    """The credentials of the global git configs of the HOME the RAG gets (git_places.py)."""
    return [
        replace(f, home=True)
        for config in home_git_configs(folder, env)
        for f in credentials_in_config(config)
    ]


def credentials_in_environment(env: Mapping[str, str]) -> list[CredentialFound]:
    """Git configuration handed to the RAG through its environment (`pass_env: [GIT_CONFIG_*]`):
    `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` pairs and `GIT_CONFIG_PARAMETERS`."""
    text = "".join(
        f"[{k.rpartition('.')[0]}]\n{k.rpartition('.')[2]} = {v}\n" for k, v in _environment_entries(env)
    )
    found = []
    for section, subsection, key, value in _entries(text):
        if (
            (key == "extraheader" and credential_header(value))
            or (key == "helper" and _helper_credential(value))
            or _in_url(value)
            or _in_url(subsection or "")
        ):
            found.append(CredentialFound(Path("the target's environment"), _name(section, subsection, key)))
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"):
        if env.get(name):
            found += credentials_in_config(Path(env[name]))
    return found


def _environment_entries(env: Mapping[str, str]) -> list[tuple[str, str]]:
    pairs = [
        (env[k], env.get("GIT_CONFIG_VALUE_" + k.removeprefix("GIT_CONFIG_KEY_"), ""))
        for k in env
        if k.startswith("GIT_CONFIG_KEY_")
    ]
    for item in re.findall(r"'((?:[^'\\]|\\.)*)'", env.get("GIT_CONFIG_PARAMETERS", "")):
        key, _, value = item.partition("=")
        pairs.append((key, value))
    return [(k.strip().replace("\n", ""), v.replace("\n", " ")) for k, v in pairs if "." in k]


def refuse_persisted_credentials(folder: Path, env: Mapping[str, str] | None = None) -> None:
    """Exit 2 (a RagCiError) when a repository holding `folder` or below it, the global git
    config of the HOME the RAG gets, or the environment the RAG is given (`env`), keeps git
    credentials the RAG could read."""
    env = env or {}
    found = (
        credentials_in_checkout(folder) + credentials_in_home(folder, env) + credentials_in_environment(env)
    )
    if not found:
        return
    where = "; ".join(
        f"{f.key} in {f.file}" + (f" (included by {f.via})" if f.via else "") for f in found[:4]
    )
    raise RagCiError(
        f"a git credential the RAG under test could read and use is there ({where}). "
        f"rag-ci does not start the RAG next to it: {' '.join(_fixes(found, folder.resolve()))} "
        "rag-ci itself needs no git credentials: its GitHub calls use the `github-token` input."
    )


def _fixes(found: list[CredentialFound], folder: Path) -> list[str]:
    """What to change in the workflow, once for each kind of place a credential was found in."""
    fixes: list[str] = []
    below = sorted(
        {f.checkout for f in found if f.checkout is not None and f.checkout.is_relative_to(folder)}
    )
    below = [c for c in below if c != folder]
    if any(f.checkout is not None and f.checkout not in below for f in found):
        fixes.append(
            "check out with `persist-credentials: false` (actions/checkout: `with: {persist-credentials: false}`), "
            "or remove the credential before rag-ci runs (GitLab CI: `sed -i -E 's#(://)[^/@]*@#\\1#' .git/config`, "
            "as examples/.gitlab-ci.yml does)."
        )
    if below:
        paths = ", ".join(f"`{c.relative_to(folder).as_posix()}`" for c in below[:4])
        fixes.append(
            f"the checkout of {paths}, inside the RAG's folder, needs `persist-credentials: false` too "
            "(the actions/checkout step with that `path:`)."
        )
    if any(f.home for f in found):
        fixes.append(
            "remove it from the HOME's git config before rag-ci runs (a step's `git config --global "
            "url.…insteadOf` for private dependencies: `git config --global --remove-section url.…`, or give "
            "that step its own `GIT_CONFIG_GLOBAL` file)."
        )
    if any(f.checkout is None and not f.home for f in found):  # handed over by `pass_env`/`env`
        fixes.append("`pass_env` must not hand over a GIT_CONFIG_* header or credential helper.")
    return fixes
