"""Starting the user's processes (build steps, command and server targets) with least privilege.

The target is the user's code, and in CI the pull request's. It gets:

- an allow-listed environment (`process_env`): the basics (PATH, HOME, LANG, TMPDIR,
  proxies, CA settings, CI, the GITHUB_* context minus tokens and the runner's
  file-command paths) plus what the user names in `target.env` / `target.pass_env`
  (`target_env`). Judge keys, the GitHub token and every INPUT_* / RAG_CI_* variable
  reach it only when named exactly;
- when rag-ci runs as root (the action's container), an unprivileged user
  (`target_user`, chosen in rag_ci.targets.process_user): it cannot read the secrets in /proc/1/environ or in rag-ci's own
  /proc/<pid>/environ, nor write rag-ci's output folder.

Every place that starts a target process does it in one line:

    await asyncio.create_subprocess_exec(*argv, cwd=root, **target_process_kwargs(target_env(config), project_dir=root))
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import sys
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rag_ci.core.config.providers import PROVIDERS
from rag_ci.errors import RagCiError
from rag_ci.files.atomic import current_umask
from rag_ci.safety.redaction import secret_parts
from rag_ci.targets.process_user import TARGET_USER_VARIABLE, target_user
from rag_ci.targets.venv import ensure_target_venv, target_venv_dir, venv_path_entries

# What every process needs to run, and nothing that authorises anything.
BASIC_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "TMPDIR",
        "TMP",
        "TEMP",
        "USER",
        "LOGNAME",
        "SHELL",
        "CI",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "RUNNER_OS",
        "RUNNER_ARCH",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "PIP_CERT",
    }
)
BASIC_PREFIXES = ("LC_", "GITHUB_")
# GITHUB_* files through which a step talks to the runner: writing GITHUB_ENV sets variables
# for every later step of the job. The target has no business with them.
RUNNER_CHANNELS = frozenset(
    {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"}
)
# Never passed by a wildcard in `pass_env`: only by their exact name.
_PROTECTED_PREFIXES = ("INPUT_", "RAG_CI_", "ACTIONS_")
# Every provider's key variable (the provider table), and GEMINI_API_KEY, which google-genai
# also reads.
_PROTECTED_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GEMINI_API_KEY",
        *(f.api_key_env for f in PROVIDERS.values() if f.api_key_env),
        *(name for f in PROVIDERS.values() for name in f.secret_envs),
    }
)
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _basic(name: str) -> bool:
    if name in RUNNER_CHANNELS or "TOKEN" in name.upper():
        return False
    return name in BASIC_VARIABLES or name.startswith(BASIC_PREFIXES)


def _protected(name: str) -> bool:
    return name in _PROTECTED_NAMES or name.startswith(_PROTECTED_PREFIXES)


def passed_env(patterns: list[str] | tuple[str, ...], environ: Mapping[str, str]) -> dict[str, str]:
    """The variables `target.pass_env` names: exact names, or `PREFIX_*` wildcards (which
    never match judge keys, the GitHub token, INPUT_*, RAG_CI_* or ACTIONS_*)."""
    passed: dict[str, str] = {}
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            passed.update(
                {k: v for k, v in environ.items() if fnmatch.fnmatchcase(k, pattern) and not _protected(k)}
            )
        elif pattern in environ:
            passed[pattern] = environ[pattern]
    return passed


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """`target.env` with `${NAME}` taken from rag-ci's environment (a missing one is an error)."""
    resolved = {}
    for key, value in env.items():
        missing = [n for n in _ENV_REFERENCE.findall(value) if n not in environ]
        if missing:
            raise RagCiError(
                f"target.env.{key} refers to ${{{missing[0]}}}, which is not set in rag-ci's environment"
            )
        resolved[key] = _ENV_REFERENCE.sub(lambda m: environ[m.group(1)], value)
    return resolved


def target_env(config: Any, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the user gives the target on top of the basics: `pass_env`, then `env`."""
    environ = os.environ if environ is None else environ
    return {**passed_env(getattr(config, "pass_env", []), environ), **resolve_env(config.env, environ)}


def declared_secrets(config: Any, environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the target's environment that are secret: the names listed in
    `target.secret_env`, and what looks like a credential in a `${NAME}` reference (a URL
    such as `${OPENAI_API_BASE}` is not one, its password is: rag_ci.safety.redaction.secret_parts)."""
    environ = os.environ if environ is None else environ
    given = target_env(config, environ)
    values = [given[n] for n in getattr(config, "secret_env", []) if n in given]
    values += [
        part
        for k, v in config.env.items()
        if _ENV_REFERENCE.search(v)
        for part in secret_parts(resolve_env({k: v}, environ)[k])
    ]
    return values


def process_env(
    extra: Mapping[str, str] | None,
    environ: Mapping[str, str] | None = None,
    *,
    project_dir: Path | None = None,
) -> dict[str, str]:
    """The environment for the user's build steps and target processes: the allow-listed
    basics of rag-ci's environment, then `extra` (what `target_env` resolved).

    The folder of the interpreter running rag-ci comes first on PATH, so that
    `python` in a build step or command is the one with the project installed
    (a virtualenv that was never activated, in CI). In rag-ci's image the RAG's own
    virtual environment comes first instead, and rag-ci's is left out (targets/venv.py).
    """
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if _basic(k)}
    user = target_user(project_dir)
    venv = target_venv_dir(environ)
    if venv is not None:
        ensure_target_venv(venv, user.uid if user else None, user.gid if user else None)
        env["PATH"] = venv_path_entries(venv, env.get("PATH", os.defpath))
        env["VIRTUAL_ENV"] = str(venv)
        env.pop("PYTHONPATH", None)  # rag-ci's, never the RAG's
    else:
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", os.defpath)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if user is not None:  # root's HOME and TMPDIR are not the target user's to write
        env["HOME"] = env["TMPDIR"] = str(user.home)
        env["USER"] = env["LOGNAME"] = user.name
    env.update(extra or {})
    return without_runner_channels(env, environ)


def without_runner_channels(env: dict[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """`env` without the runner's command files: neither their variables (a `pass_env:
    [GITHUB_*]` would pass them) nor any variable whose value names one of their paths
    (`env: {OUT: ${GITHUB_OUTPUT}}`). The target must not even know where they are."""
    paths = [environ[name] for name in RUNNER_CHANNELS if environ.get(name)]
    return {k: v for k, v in env.items() if k not in RUNNER_CHANNELS and not any(p in v for p in paths)}


def permission_hint(output: str | None = None, *, project_dir: Path | None) -> str:
    """What to do about a "Permission denied" while the target runs as another user than
    rag-ci (root): "" when it does not, or when `output` (a failing step's or process's last
    lines) says nothing about permissions."""
    user = target_user(project_dir)
    if user is None or (output is not None and "permission denied" not in output.lower()):
        return ""
    return (
        f"\n(the build steps and the target run as user {user.name} (uid {user.uid}, gid {user.gid}), not as rag-ci's root, "
        f"and that user was denied access: give it the access it needs (e.g. `chown -R {user.uid} .` on the checkout "
        f"before rag-ci starts), or run the target as root or another user: set {TARGET_USER_VARIABLE}=root "
        f"(or a `name`, `uid` or `uid:gid`) in the workflow's env)"
    )


def target_process_kwargs(
    extra: Mapping[str, str] | None = None, *, project_dir: Path | None
) -> dict[str, Any]:
    """`env=` plus, under root, `user=`/`group=`/`extra_groups=` for asyncio's or subprocess's
    process creation: the one call every target-starting site makes."""
    user = target_user(project_dir)
    return {"env": process_env(extra, project_dir=project_dir), **(user.kwargs() if user is not None else {})}


def protect_output_dir(path: Path, *, project_dir: Path) -> None:
    """rag-ci's output folder in the action: a real folder, owned by rag-ci, that the target
    cannot write and the job's next step can read.

    The next step (actions/upload-artifact) runs as the runner's user, not as the container's
    root: the folder is made 0755, and this process's umask stops masking read access (files
    0644, sub-folders 0755; write access stays masked), so everything rag-ci writes there,
    from results.json to the audit sample, is readable by others and writable by root only.
    """
    if path.is_symlink():
        raise RagCiError(f"the output folder {path} is a symbolic link; refusing to write through it")
    path.mkdir(parents=True, exist_ok=True)
    if target_user(project_dir) is not None:
        os.chown(path, os.geteuid(), os.getegid())
    try:
        os.chmod(path, 0o755)
    except OSError:
        pass  # another user's folder (rag-ci not root): its mode is that user's choice
    os.umask(current_umask() & ~0o055)


class OutputTail:
    """The last lines a process wrote, kept for the report (redacted where it enters rag-ci)."""

    def __init__(self, max_lines: int = 200):
        self.lines: deque[str] = deque(maxlen=max_lines)

    def add(self, line: str) -> None:
        self.lines.append(line.rstrip("\n"))

    def text(self, last: int = 50) -> str:
        return "\n".join(list(self.lines)[-last:])

    async def follow(self, stream: asyncio.StreamReader | None, also: OutputTail | None = None) -> None:
        """Each line of `stream`, into this tail and `also` (one process's own and all of the target's)."""
        if stream is None:
            return
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace")
            self.add(text)
            if also is not None:
                also.add(text)


async def finish_reader(task: asyncio.Task[None] | None, grace_s: float = 2.0) -> None:
    """Let an output-following task read the last lines of an exited process, then drop it."""
    if task is None:
        return
    try:
        await asyncio.wait_for(task, grace_s)
    except TimeoutError:
        task.cancel()
    except asyncio.CancelledError:
        task.cancel()
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this task is being cancelled (an interrupted run), not only the reader
