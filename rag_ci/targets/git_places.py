"""Where else the RAG finds git configuration: the repositories below its folder, and the
git configs of the HOME it is given.

A second `actions/checkout` with `path: corpora/docs` (credentials persisted, the default) is
a repository inside the RAG's folder: its `.git/config` holds the job token's header, and the
RAG reads it as easily as its own. A step that ran `git config --global
url."https://x-access-token:…@github.com/".insteadOf …` (a common way to reach private
dependencies) leaves the token in `~/.gitconfig` (or `$XDG_CONFIG_HOME/git/config`), which git
reads for the RAG and its build steps whenever they run with that HOME.

The walk below the folder is bounded (MAX_DEPTH folders deep, MAX_FOLDERS folders in all,
breadth first so the shallow checkouts come first), follows no link, and never enters a
`.git` folder (a submodule's config is found from its superproject's `.git/modules/`).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping
from pathlib import Path

from rag_ci.targets.process_user import target_user

MAX_DEPTH = 8
MAX_FOLDERS = 20_000


def repositories_below(folder: Path) -> list[Path]:
    """The folders below `folder` (not itself) that are a repository's worktree: they hold a
    `.git` folder, or a `.git` file (`gitdir: …`, a submodule or a linked worktree)."""
    found: list[Path] = []
    todo: deque[tuple[str, int]] = deque([(str(folder), 0)])
    visited = 0
    while todo and visited < MAX_FOLDERS:
        current, depth = todo.popleft()
        visited += 1
        try:
            with os.scandir(current) as entries:
                children = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            if entry.name == ".git":
                if depth > 0:
                    found.append(Path(current))
                continue
            try:
                if depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                    todo.append((entry.path, depth + 1))
            except OSError:
                continue
    return found


def home_git_configs(
    folder: Path, env: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The global git config files (`~/.gitconfig`, `~/.config/git/config`,
    `$XDG_CONFIG_HOME/git/config`) of the HOME the RAG and its build steps get
    (rag_ci.targets.processes.process_env): `target.env`'s HOME and XDG_CONFIG_HOME, and the
    unprivileged user's own HOME (rag-ci under root) or else rag-ci's."""
    environ = os.environ if environ is None else environ
    user = target_user(folder)
    # rag-ci's own HOME and XDG_CONFIG_HOME too while the target runs as rag-ci's user: with
    # another HOME in `target.env`, it can still read those files by their path.
    own = user is None
    homes = [env.get("HOME", ""), str(user.home) if user is not None else environ.get("HOME", "")]
    xdgs = [env.get("XDG_CONFIG_HOME", ""), environ.get("XDG_CONFIG_HOME", "") if own else ""]
    files = [Path(h) / name for h in homes if h for name in (".gitconfig", ".config/git/config")]
    files += [Path(x) / "git" / "config" for x in xdgs if x]
    unique: list[Path] = []
    for file in files:
        if file not in unique:
            unique.append(file)
    return unique
