"""What `rag-ci init` reads of a web app beyond its framework (issue 55: a FastAPI app got
`health: /docs`, which it did not serve, and no build step):

- `health_path`: the conventional health route the app's code declares (`/health`, `/healthz`,
  `/ready`, `/ping`, …), else none: `init` then writes no `health:` and the server counts as up
  once it answers, rather than a path the app does not have;
- `build_steps`: how the app's dependencies are installed, from its requirements or lock file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# A route string in the code: `@app.get("/health")`, `path("healthz/", …)`, `Route("/ping", …)`.
_HEALTH = re.compile(
    r"""["'](/?(?:api/)?(?:health|healthz|healthcheck|ready|readyz|livez|ping|status))/?["']"""
)
# The first file found decides: a lock file says exactly what the app runs with.
_INSTALLS = (
    ("uv.lock", "uv sync --frozen"),
    ("poetry.lock", "poetry install --no-root"),
    ("Pipfile.lock", "pipenv install --deploy"),
    ("requirements.txt", "pip install -r requirements.txt"),
    ("package-lock.json", "npm ci"),
    ("package.json", "npm install"),
)


def health_path(sources: Iterable[str]) -> str | None:
    """The health route the app's sources declare, or None."""
    for text in sources:
        found = _HEALTH.search(text)
        if found:
            return "/" + found.group(1).lstrip("/")
    return None


def build_steps(root: Path) -> list[str]:
    """The install step of the app's dependencies, from the lock or requirements file at its root."""
    return next(([step] for name, step in _INSTALLS if (root / name).is_file()), [])
