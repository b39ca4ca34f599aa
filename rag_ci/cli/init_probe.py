"""What `rag-ci init` reads of an app's code beyond its framework (issue 55: a FastAPI app got
`health: /docs`, which it did not serve, and no build step; beside a Dockerfile init guessed
`/query` and `/health`, which the app did not have):

- `health_path`: the conventional health route the app's code declares (`/health`, `/healthz`,
  `/ready`, `/ping`, …), else none: `init` then writes no health route, and the server counts as
  up once it answers, rather than a path the app does not have;
- `question_route`: the POST route the code declares that answers a question (`/query`, `/ask`,
  `/chat`, `/v1/chat/completions`, …), preferring one whose handler reads a question-like body,
  else none: `init` then writes a placeholder `validate` refuses, never a made-up route;
- `build_steps`: how the app's dependencies are installed, from its requirements or lock file.

Only the code is read, never run: a route a router's prefix or a settings file builds is not
found (init says so in the comment it writes, and the user fills it in).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

_HEALTH_NAMES = r"(?:api/)?(?:health|healthz|healthcheck|ready|readyz|livez|ping|status)"
# A route string in the code: `@app.get("/health")`, `Route("/ping", …)`, and Django's
# `path("healthz/", …)`, whose routes have no leading slash. A bare "status" (a dict key, a
# JSON field) is no route.
_HEALTH = re.compile(
    rf"""["'](/{_HEALTH_NAMES})/?["']|\b(?:re_)?path\(\s*r?["']\^?({_HEALTH_NAMES})/?\$?["']"""
)
_ROUTE = r"""["'](/[\w\-./{}<>:]*)["']"""
# A POST route as the frameworks declare it: `@app.post("/ask")` (FastAPI, Flask 2, aiohttp's
# RouteTableDef, Starlette's router), `@app.route("/ask", methods=["POST"])` (Flask),
# `Route("/ask", ask, methods=["POST"])` (Starlette), `web.post("/ask", …)`/`add_post(…)` (aiohttp),
# `app.post('/ask', (req, res) => …)` (Express).
_POST_ROUTES = (
    re.compile(rf"^\s*@[\w.]+\.post\(\s*{_ROUTE}", re.M),
    re.compile(rf"""^\s*@[\w.]+\.route\(\s*{_ROUTE}[^)]*methods\s*=\s*[\[(][^\])]*["']POST["']""", re.M),
    re.compile(rf"""\bRoute\(\s*{_ROUTE}[^)]*methods\s*=\s*[\[(][^\])]*["']POST["']"""),
    re.compile(rf"\b(?:web\.post|add_post)\(\s*{_ROUTE}"),
)
_EXPRESS_POST = re.compile(rf"\b(?:app|router)\.post\(\s*{_ROUTE}\s*,")
# http.server: `def do_POST(self)`, and the paths its body compares `self.path` with.
_DO_POST = re.compile(
    r"^([ \t]*)def do_POST\(self[^)]*\):(.*?)(?=^\1(?:async )?(?:def|class) |\Z)", re.M | re.S
)
# A line of it that reads the request's path (`self.path == "/ask"`, `!=`, `in (...)`,
# `parsed.path == …`), not `os.path.join("/data", …)`.
_PATH_LINE = re.compile(r"^.*(?:\bself\.path\b|\.path\s*(?:==|!=|in\b)).*$", re.M)
# What a question endpoint is called (whole words of its path: `/storage` holds no `rag`,
# `/tasks` no `ask`), and what its handler reads.
_QUESTION_WORD = re.compile(
    r"(?<![a-z0-9])(?:query|queries|ask|chat|search|answers?|questions?|qa|rag|complete|completions?|"
    r"generate|retrieve|invoke)(?![a-z0-9])",
    re.I,
)
_QUESTION_BODY = re.compile(r"\b(?:question|query|prompt|messages|ask)\b", re.I)
_HANDLER_WINDOW = 800  # characters after the route: its handler's signature and first lines
# The first file found decides: a lock file says exactly what the app runs with.
_INSTALLS = (
    ("uv.lock", "uv sync --frozen"),
    ("poetry.lock", "poetry install --no-root"),
    ("Pipfile.lock", "pipenv install --deploy"),
    ("requirements.txt", "pip install -r requirements.txt"),
    ("package-lock.json", "npm ci"),
    ("package.json", "npm install"),
)


@dataclass(frozen=True)
class Route:
    path: str
    source: str  # the file declaring it, as init's comment names it


def health_path(sources: Iterable[str]) -> str | None:
    """The health route the app's sources declare, or None."""
    for text in sources:
        found = _HEALTH.search(text)
        if found:
            return "/" + (found.group(1) or found.group(2)).lstrip("/")
    return None


def question_route(sources: Mapping[str, str]) -> Route | None:
    """The POST route of `sources` (file name -> text) that answers a question: the one whose
    name and handler look most like it (a handler reading `question`, `query`, `messages`…),
    the first found on a tie; None when no POST route looks like one."""
    best: tuple[int, Route] | None = None
    for name, text in sources.items():
        for path, handler, every_path in _post_routes(name, text):
            if _HEALTH.fullmatch(f'"{path}"'):
                continue
            # A handler answering a POST on every path (http.server's do_POST that never reads
            # self.path) is the app's one endpoint: it answers questions wherever they are sent.
            named = every_path or bool(_QUESTION_WORD.search(path))
            score = 2 * named + bool(_QUESTION_BODY.search(handler))
            if score and (best is None or score > best[0]):
                best = (score, Route(path, name))
    return best[1] if best else None


def _post_routes(name: str, text: str) -> Iterable[tuple[str, str, bool]]:
    """(path, the handler's text, whether it answers on every path) of each POST route `text` declares."""
    patterns = (
        [*_POST_ROUTES, _EXPRESS_POST] if name.endswith((".js", ".mjs", ".cjs", ".ts")) else _POST_ROUTES
    )
    for pattern in patterns:
        for found in pattern.finditer(text):
            yield found.group(1), text[found.end() : found.end() + _HANDLER_WINDOW], False
    for handler in _DO_POST.finditer(text):
        body = handler.group(2)
        compared = [
            path
            for line in _PATH_LINE.findall(body)
            for path in re.findall(r"""["'](/[\w\-./]*)["']""", line)
        ]
        for path in compared:
            yield path, body, False
        if not compared:  # it never looks at self.path: it answers on every path, "/" is one
            yield "/", body, True


def build_steps(root: Path) -> list[str]:
    """The install step of the app's dependencies, from the lock or requirements file at its root."""
    return next(([step] for name, step in _INSTALLS if (root / name).is_file()), [])
