"""The docker target's container environment, and the values to redact from what it says.

`env` and `build_args` values written `${NAME}` are read from rag-ci's environment; they,
values under secret-looking names, `pass_env` variables under such names and `secret_env`
are replaced by *** in every message, log tail and diagnostic the target produces.
"""

from __future__ import annotations

import re

from rag_ci.core.config import DockerTargetConfig
from rag_ci.errors import RagCiError
from rag_ci.targets.processes import passed_env

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)


def resolve_env(
    env: dict[str, str], environ: dict[str, str], field: str = "target.env"
) -> tuple[dict[str, str], list[str]]:
    """Expand ${NAME} from rag-ci's environment -> (env for the container, values to redact)."""
    resolved, secrets = {}, []
    for key, value in env.items():
        names = _ENV_REFERENCE.findall(value)
        missing = [n for n in names if n not in environ]
        if missing:
            raise RagCiError(
                f"{field}.{key} refers to ${{{missing[0]}}}, which is not set in rag-ci's environment"
            )
        resolved[key] = _ENV_REFERENCE.sub(lambda m: environ[m.group(1)], value)
        if names or _SECRET_NAME.search(key):
            secrets.append(resolved[key])
    # Longest first, so that a secret containing another is replaced whole. Under 4
    # characters a value is no secret, and redacting it would shred the logs.
    return resolved, sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)


def container_env(
    config: DockerTargetConfig, environ: dict[str, str]
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """-> (the container's env, the image's build args, the values to redact, longest first)."""
    env, secrets = resolve_env(dict(config.env), environ)
    # Build args expand ${NAME} like env (a missing one stops the run before any build).
    build_args, arg_secrets = resolve_env(dict(config.build_args), environ, "target.build_args")
    secrets = [*secrets, *arg_secrets]
    # `pass_env` names variables of rag-ci's environment to hand over as they are.
    passed = passed_env(config.pass_env, environ)
    env = {**passed, **env}
    extra = [v for k, v in passed.items() if _SECRET_NAME.search(k) or k in config.secret_env]
    extra += [env[k] for k in config.secret_env if k in env]
    return env, build_args, sorted({*secrets, *(v for v in extra if len(v) >= 4)}, key=len, reverse=True)
