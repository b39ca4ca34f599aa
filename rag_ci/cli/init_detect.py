"""`rag-ci init`'s guess of how to reach the user's RAG, from the repository's files.

A Dockerfile means `docker`: its `EXPOSE`, else a port in its `CMD`, else the one the app's code
listens on, is the port; the question and health routes are the ones the code of the build
context declares (rag_ci.cli.init_probe), none guessed. A web app
means `http`: FastAPI, Starlette, Flask, aiohttp and Django found in the Python sources
(any case of `.py`, up to three folders deep, `from fastapi import ...` as well as
`FastAPI(`) or in the requirements (`requirements*.txt`, `pyproject.toml`, `Pipfile`,
`setup.cfg`), Express in `package.json`. The http target gets the app's usual port (or the
one its code or start command names), a start command when the app's module is found, the
health route its code declares (none when it declares none) and the build step of its
requirements or lock file (rag_ci.cli.init_probe). Anything else is `python`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from rag_ci.cli.init_probe import Route, build_steps, health_path, question_route
from rag_ci.cli.validate_target import PLACEHOLDER_PATH
from rag_ci.files.bounded_read import read_head_text
from rag_ci.files.project import leaves

SKIP_FOLDERS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "__pycache__",
        "site-packages",
        ".tox",
        "build",
        "dist",
        ".mypy_cache",
        ".pytest_cache",
    }
)
MAX_SOURCES = 300
APP_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts")  # where routes are declared
MAX_READ_BYTES = 100_000  # of each file: enough for the imports, the app object and the port
REQUIREMENT_FILES = re.compile(
    r"^(requirements[\w.-]*\.(txt|in)|pyproject\.toml|pipfile|setup\.cfg|setup\.py)$", re.I
)
# framework: (the import or call that shows it in a source, its name in a requirements file, its usual port)
FRAMEWORKS = {
    "FastAPI": (
        r"\bfrom\s+fastapi\b|\bimport\s+fastapi\b|\bFastAPI\s*\(",
        r"(?<![\w-])fastapi(?![\w-])",
        8000,
    ),
    "Starlette": (r"\bfrom\s+starlette\b|\bimport\s+starlette\b", r"(?<![\w-])starlette(?![\w-])", 8000),
    "Flask": (r"\bfrom\s+flask\b|\bimport\s+flask\b|\bFlask\s*\(", r"(?<![\w-])flask(?![\w-])", 5000),
    "aiohttp": (r"\baiohttp\.web\b|\bfrom\s+aiohttp\s+import\s+web\b", r"(?<![\w-])aiohttp(?![\w-])", 8080),
    "Django": (r"\bfrom\s+django\b|\bimport\s+django\b", r"(?<![\w-])django(?![\w-])", 8000),
}
_PORT_IN_CODE = re.compile(
    r"\bport\s*=\s*(\d{2,5})\b|--port[= ](\d{2,5})\b|\.listen\(\s*(\d{2,5})\b|"
    r"(?:-b|--bind)[= ][\w.]*:(\d{2,5})\b|runserver\s+(?:[\w.]+:)?(\d{2,5})\b|"
    r"""Server\(\s*\(\s*["'][^"']*["']\s*,\s*(\d{2,5})\b"""  # HTTPServer(("", 8080), Handler)
)
# A start command's port beyond the code's forms: `-p 8000` (hypercorn, many CLIs), `http.server 8000`.
_PORT_IN_COMMAND = re.compile(r"(?<![\w-])-p[= ](\d{2,5})\b|\bhttp\.server\s+(\d{2,5})\b")
_APP_OBJECT = re.compile(r"^(\w+)\s*=\s*(?:FastAPI|Starlette|Flask)\s*\(", re.M)


@dataclass(frozen=True)
class Detected:
    kind: str  # python | http | docker
    framework: str = ""  # what was found: "FastAPI in app/main.py", "Dockerfile (EXPOSE 8080)"
    port: int = 8000
    start: list[str] = field(default_factory=list)  # the command that starts the app, when known
    dockerfile: str = "Dockerfile"  # its name as found (any case)
    health: str | None = None  # the health route the app declares (rag_ci.cli.init_probe)
    build: list[str] = field(default_factory=list)  # how its dependencies are installed
    question: Route | None = None  # the POST route that answers questions, when the code declares one
    port_found: str = ""  # where the port was found ("EXPOSE 8080 in Dockerfile"); "": assumed


def _files(root: Path) -> list[Path]:
    """The repository's files up to three folders deep, without virtualenvs, caches and dependencies."""
    out: list[Path] = []
    todo = [(root, 0)]
    while todo and len(out) < 5000:
        folder, depth = todo.pop(0)
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if (
                entry.is_dir()
                and depth < 3
                and entry.name not in SKIP_FOLDERS
                and not entry.name.startswith(".")
            ):
                todo.append((entry, depth + 1))
            elif entry.is_file():
                out.append(entry)
    return out


def _read(path: Path) -> str:
    """Its first MAX_READ_BYTES, if it is a regular file (`main: /dev/zero` or a FIFO reads as "")."""
    return read_head_text(path, MAX_READ_BYTES)


def _port(text: str, pattern: re.Pattern[str] = _PORT_IN_CODE) -> int | None:
    """The first port the text names that is one (1-65535: `port=99999` is not)."""
    for found in pattern.finditer(text):
        port = _in_range(next(g for g in found.groups() if g))
        if port is not None:
            return port
    return None


def _in_range(digits: str) -> int | None:
    return int(digits) if 1 <= int(digits) <= 65535 else None


def detect_target(root: Path) -> Detected:
    """The target kind the repository suggests, with what was found (see the module's docstring)."""
    files = _files(root)
    sources = [f for f in files if f.suffix.lower() in APP_SUFFIXES and not _a_test(f, root)][:MAX_SOURCES]
    texts = {source: _read(source) for source in sources}
    question = question_route({s.relative_to(root).as_posix(): t for s, t in texts.items()})
    dockerfile = next((f for f in files if f.parent == root and f.name.lower() == "dockerfile"), None)
    if dockerfile is not None:
        return _docker(dockerfile, texts, question)
    texts = {source: text for source, text in texts.items() if source.suffix.lower() == ".py"}
    for name, (in_code, _, port) in FRAMEWORKS.items():
        using = [source for source, text in texts.items() if re.search(in_code, text)]
        if using:  # the file that makes the app object names the app; the first port found is its port
            app = next((source for source in using if _APP_OBJECT.search(texts[source])), using[0])
            port = next((p for p in (_port(texts[source]) for source in [app, *using]) if p), port)
            return Detected(
                "http",
                f"{name} in {app.relative_to(root).as_posix()}",
                port,
                _start_command(name, app, texts[app], root, port),
                health=health_path(texts[s] for s in [app, *using]),
                build=build_steps(root),
                question=question,
            )
    requirements = [f for f in files if REQUIREMENT_FILES.match(f.name)]
    for name, (_, in_requirements, port) in FRAMEWORKS.items():
        for path in requirements:
            if re.search(in_requirements, _read(path), re.I):
                found = f"{name} in {path.relative_to(root).as_posix()}"
                return Detected(
                    "http",
                    found,
                    port,
                    health=health_path(texts.values()),
                    build=build_steps(root),
                    question=question,
                )
    package = root / "package.json"
    if package.is_file():
        express = _express(package)
        if express is not None:
            return express
    return Detected("python")


def _a_test(source: Path, root: Path) -> bool:
    """A test file: its `client.post("/ask")` calls a route, it declares none."""
    parts = source.relative_to(root).parts
    return (
        any(p in ("test", "tests") for p in parts[:-1])
        or re.match(r"test_|.*_test\.py$", parts[-1]) is not None
    )


def _docker(dockerfile: Path, texts: dict[Path, str], question: Route | None) -> Detected:
    """The port (EXPOSE, else the CMD's, else the code's), the routes the build context's code declares."""
    text = _read(dockerfile)
    exposes = re.findall(r"^\s*EXPOSE\s+(\d{2,5})", text, re.M | re.I)
    exposed = next((p for p in map(_in_range, exposes) if p is not None), None)
    command = " ".join(re.findall(r"^\s*(?:CMD|ENTRYPOINT)\s+(.*)$", text, re.M | re.I))
    command = re.sub(r'"\s*,\s*"', " ", command)  # ["uvicorn", "--port", "9000"] -> uvicorn --port 9000
    in_command = _port(command) or _port(command, _PORT_IN_COMMAND)
    in_code = next(((s, p) for s, t in texts.items() if (p := _port(t))), None)
    # `EXPOSE 99999` is no port: never written as one (validate refuses it).
    if exposed:
        port, found = exposed, f"EXPOSE {exposed} in {dockerfile.name}"
    elif in_command:
        port, found = in_command, f"port {in_command} in its CMD"
    elif in_code:
        port, found = in_code[1], f"port {in_code[1]} in {in_code[0].name}"
    else:
        port, found = 8000, ""
    none = f"EXPOSE {exposes[0]} is no port (1-65535)" if exposes else "no port found"
    return Detected(
        "docker",
        f"{dockerfile.name} ({found or none + ': 8000 assumed'})",
        port,
        dockerfile=dockerfile.name,
        health=health_path(texts.values()),
        question=question,
        port_found=found,
    )


def _start_command(framework: str, source: Path, text: str, root: Path, port: int) -> list[str]:
    """How the app is usually started, when its module and app object are found."""
    module = ".".join(source.relative_to(root).with_suffix("").parts)
    if framework == "Django" and (root / "manage.py").is_file():
        return ["python", "manage.py", "runserver", str(port)]
    app = _APP_OBJECT.search(text)
    # Main.PY, or a folder named `1app` or `my-app`, is no importable module (validate refuses it).
    if app is None or source.suffix != ".py" or not all(part.isidentifier() for part in module.split(".")):
        return []
    if framework in ("FastAPI", "Starlette"):
        return ["uvicorn", f"{module}:{app.group(1)}", "--port", str(port)]
    if framework == "Flask":
        return ["flask", "--app", f"{module}:{app.group(1)}", "run", "--port", str(port)]
    return []


def _express(package: Path) -> Detected | None:
    try:
        data = json.loads(_read(package))
    except ValueError:
        return None
    dependencies = (
        {**(data.get("dependencies") or {}), **(data.get("devDependencies") or {})}
        if isinstance(data, dict)
        else {}
    )
    if "express" not in dependencies:
        return None
    main = data.get("main") if isinstance(data.get("main"), str) else "index.js"
    script = package.parent / main
    # Only a file of the repository, and only its head (`_read`: never a device or a FIFO).
    port = (_port(_read(script)) if not leaves(script, package.parent) else None) or 3000
    start = (
        ["npm", "start"]
        if isinstance(data.get("scripts"), dict) and "start" in data["scripts"]
        else ["node", main]
    )
    return Detected("http", f"Express in {package.name}", port, start)


def detected_settings(detected: Detected) -> dict:
    """What init's target block takes from the detection: what was found, the start command, the health path."""
    settings: dict = (
        {"found": detected.framework, "dockerfile": detected.dockerfile} if detected.framework else {}
    )
    if detected.start:
        settings["start"] = detected.start
    # Only a health route the app declares: a guessed one (`/docs`, `/health`) may not exist (issue 55).
    settings["health"] = detected.health
    if detected.question is not None:  # the route the code declares, for the kind chosen
        settings["path"] = detected.question.path
        settings["path_found"] = f"POST {detected.question.path} in {detected.question.source}"
        settings["url"] = f"http://127.0.0.1:{detected.port}{detected.question.path}"
    elif detected.framework and detected.kind == "http":
        # An app was found but no route that answers questions: a placeholder validate and run
        # refuse, never a guessed `/query` the app may not have (issue 55).
        settings["url"] = f"http://127.0.0.1:{detected.port}{PLACEHOLDER_PATH}"
    if detected.port_found:
        settings["port_found"] = detected.port_found
    if detected.kind == "docker":
        settings["dockerfile_found"] = "yes"
    if detected.build:
        settings["build"] = detected.build
    return settings
