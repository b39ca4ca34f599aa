"""Which user the target's processes run as when rag-ci runs as root (the action's container).

An unprivileged user cannot read the secrets in /proc/1/environ or in rag-ci's own
/proc/<pid>/environ, nor write rag-ci's output folder (rag_ci.targets.processes starts the
processes with it).

Which user: `RAG_CI_TARGET_USER` (a name, `uid` or `uid:gid`; `root` keeps root) when set;
else the owner of the project folder when that is not root (on GitHub's runners, the
runner user that checked the repository out, so build steps can write in it); else, in
Actions or in rag-ci's image (RAG_CI_IMAGE=1), `nobody`; else (a root-owned checkout on a
developer's machine) root, with a note on stderr. The choice is the workflow's, never rag-ci.yml's: the config is the pull
request's to edit. Which group: the user's own primary group (`own_group`), never the
checkout's, root's or the Docker socket's, and no supplementary groups: on GitHub's runners
the checkout is `runner:docker`, and the `docker` group is the Docker API.
"""

from __future__ import annotations

import atexit
import functools
import grp
import os
import pwd
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError

TARGET_USER_VARIABLE = "RAG_CI_TARGET_USER"
# Set in the action image: there, a root-owned checkout still gets `nobody` for the target.
IMAGE_VARIABLE = "RAG_CI_IMAGE"


@dataclass(frozen=True)
class TargetUser:
    """The unprivileged account the target runs as, with a private writable home."""

    uid: int
    gid: int
    name: str
    home: Path

    def kwargs(self) -> dict[str, Any]:
        # extra_groups=[]: root's supplementary groups would otherwise stay with the child
        # (and `docker` among them would hand it the Docker API).
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def _lookup(spec: str) -> tuple[int, int | None, str]:
    """`name`, `uid` or `uid:gid` -> (uid, gid or None for "its own", name)."""
    name, _, group = spec.partition(":")
    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        uid, label = entry.pw_uid, entry.pw_name
    except KeyError:
        if not name.isdigit():
            raise RagCiError(f"{TARGET_USER_VARIABLE}={spec}: no such user") from None
        uid, label = int(name), name
    return uid, int(group) if group.isdigit() else None, label


def _socket_groups(environ: Mapping[str, str]) -> set[int]:
    """The groups of the Docker API sockets in sight: a member of one drives the engine, which
    is root on the host and every secret of the job (the runner mounts the socket into
    container actions)."""
    paths = {"/var/run/docker.sock", "/run/docker.sock"}
    host = environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        paths.add(host[len("unix://") :])
    groups = set()
    for path in paths:
        try:
            groups.add(os.stat(path).st_gid)
        except OSError:
            pass
    return groups


def own_group(uid: int, environ: Mapping[str, str] | None = None) -> int:
    """The group the target runs with: its user's own primary group, never root's nor the
    Docker socket's (on GitHub's runners the runner user's primary group is `docker`).

    A uid with no account in this system (the runner's, seen from inside the action's
    container) has no primary group here: it gets `nogroup`, which opens nothing.
    """
    environ = os.environ if environ is None else environ
    try:
        gid = pwd.getpwuid(uid).pw_gid
    except KeyError:
        gid = None
    if gid is None or gid == 0 or gid in _socket_groups(environ):
        gid = _nogroup()
    return gid


def _nogroup() -> int:
    for name in ("nogroup", "nobody"):
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    return 65534  # the overflow gid: no file belongs to it


@functools.cache
def _choose_user(project_dir: str, setting: str, in_ci_container: bool) -> TargetUser | None:
    if setting.strip() in ("root", "0"):
        return None
    if setting.strip():
        uid, gid, name = _lookup(setting.strip())
    else:
        owner = os.stat(project_dir) if project_dir else None
        if owner is not None and owner.st_uid != 0:
            # The owner's uid, so that builds can write in the checkout; never the folder's
            # group, which on GitHub's runners is `docker` (see own_group).
            uid, gid = owner.st_uid, None
            try:
                name = pwd.getpwuid(uid).pw_name
            except KeyError:
                name = str(uid)
        elif in_ci_container:
            uid, gid, name = _lookup("nobody")
        else:
            # A root-owned checkout on a developer's or a CI machine: no unprivileged user
            # could write the build's index into it, so the target keeps root, and says so.
            print(
                f"[rag-ci] note: running the target as root (the project folder belongs to root); "
                f"set {TARGET_USER_VARIABLE}=<user> to run it unprivileged",
                file=sys.stderr,
            )
            return None
    if uid == 0:
        return None
    if gid is None:  # `uid:gid` in RAG_CI_TARGET_USER is the workflow's explicit choice
        gid = own_group(uid)
    home = Path(tempfile.mkdtemp(prefix="rag-ci-target-home-"))
    os.chown(home, uid, gid)
    atexit.register(shutil.rmtree, home, True)
    return TargetUser(uid, gid, name, home)


def target_user(project_dir: Path | None) -> TargetUser | None:
    """The user to start target processes as, or None to keep rag-ci's (not root, or opted out).
    `project_dir`: the folder whose owner the target runs as (see the module docstring); None: none known."""
    if os.geteuid() != 0:
        return None
    in_ci_container = os.environ.get("GITHUB_ACTIONS") == "true" or os.environ.get(IMAGE_VARIABLE) == "1"
    folder = str(Path(project_dir).resolve()) if project_dir is not None else ""
    return _choose_user(folder, os.environ.get(TARGET_USER_VARIABLE, ""), in_ci_container)
