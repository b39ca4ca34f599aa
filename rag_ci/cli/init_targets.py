"""`rag-ci init`'s `target:` block, one entry per target kind (rag_ci.core.config.TARGET_CONFIGS).

An entry says which settings `init` asks for that kind (after the kind itself) and writes the
block from them; every value the user may need to change is marked. A kind without an entry is
refused, never written as another kind's block (tests/unit/test_target_kinds.py keeps the
entries and the kinds the same).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from rag_ci.cli.errors import UserError
from rag_ci.cli.validate_target import PLACEHOLDER_PATH
from rag_ci.core.config import TARGET_CONFIGS


@dataclass(frozen=True)
class TargetTemplate:
    # (setting, question, default) asked in order; `{port}` in a default is the port the
    # repository suggests (rag_ci.cli.init_detect), and what it detects wins over a default.
    asks: tuple[tuple[str, str, str], ...]
    block: Callable[[dict[str, str]], str]  # the settings -> the `target:` section


def _python(settings: dict[str, str]) -> str:
    return (
        "target:\n  kind: python\n"
        f"  entry: {json.dumps(settings['entry'])}   # module:function answering {{id, question, corpora}} (docs/targets.md)\n"
    )


def _command(settings: dict[str, str]) -> str:
    command = json.dumps(settings["command"].split())
    return (
        "target:\n  kind: command\n"
        f"  command: {command}   # one JSON request per line on stdin, one reply per line (docs/targets.md)\n"
    )


def _http(settings: dict[str, str]) -> str:
    declared = settings.get("path_found", "")
    found = (
        ""
        if not settings.get("found")
        else f"   # {settings['found']}; {declared}: POSTed {{id, question, corpora}}"
        if declared and settings["url"].endswith(" ".join(declared.split()[1:2]))
        else f"   # {settings['found']}: fill in the path that answers a question"
    )
    start = (
        f"  start: {json.dumps(settings['start'])}   # launched first (in rag-ci.yml's folder), then polled until healthy\n"
        if settings.get("start")
        else "  # start: [python, -m, myapp]   # launched first (in rag-ci.yml's folder), then polled until it answers\n"
    )
    build = (
        f"  build: {json.dumps(settings['build'])}   # from the app's requirements or lock file\n"
        if settings.get("build")
        else ""
    )
    health = (
        f"  health: {json.dumps(settings['health'])}   # the app's health route: 2xx once it is ready\n"
        if settings.get("health")
        else "  # health: /health   # none found in the app: it counts as up once it answers\n"
    )
    return (
        "target:\n  kind: http\n"
        f"  url: {json.dumps(settings['url'])}{found or '   # POSTed {id, question, corpora}'} "
        "(or map your API: request/response, docs/targets.md)\n" + build + start + health
    )


def _docker(settings: dict[str, str]) -> str:
    """Only what the Dockerfile and the build context's code say (rag_ci.cli.init_detect): a
    question route the code does not declare is a placeholder `validate` refuses, a health
    route it does not declare is none (issue 55: `/query` and `/health` were guessed)."""
    dockerfile = settings.get("dockerfile", "Dockerfile")
    port, path = int(settings["port"]), settings["path"]
    found_port = settings.get("port_found", "")
    return (
        "target:\n  kind: docker\n"
        f"  dockerfile: {json.dumps(dockerfile)}"
        + (
            ""
            if settings.get("dockerfile_found")
            else "   # not there yet: write it (validate refuses the target until then)"
        )
        + f"\n  port: {port}   # "
        + (
            found_port
            if re.search(rf"\b{port}\b", found_port)
            else "no EXPOSE, nor a port in its CMD or code: set the port your app listens on"
        )
        + f"\n  path: {json.dumps(path)}   # "
        + _docker_path_note(settings)
        + "\n"
        + (
            f"  health: {json.dumps(settings['health'])}   # the health route in the app's code: 2xx once it is ready\n"
            if settings.get("health")
            else "  health: null   # no health route found in the app's code: ready once `path` answers (set yours if it has one)\n"
        )
    )


def _docker_path_note(settings: dict[str, str]) -> str:
    if settings["path"] == PLACEHOLDER_PATH:
        return (
            "no POST route answering questions found in the app's code: FILL IN yours "
            "(validate refuses this placeholder; request/response map your API, docs/targets.md)"
        )
    found = settings.get("path_found", "")
    said = f"{found}: " if found.startswith(f"POST {settings['path']} in ") else ""  # not when typed over
    return f"{said}POSTed {{id, question, corpora}} (or map your API: request/response, docs/targets.md)"


TARGET_TEMPLATES: dict[str, TargetTemplate] = {
    "python": TargetTemplate((("entry", "module:function that answers", "app:answer"),), _python),
    "command": TargetTemplate((("command", "command to start", "python rag_server.py"),), _command),
    "http": TargetTemplate((("url", "URL to POST questions to", "http://127.0.0.1:{port}/query"),), _http),
    "docker": TargetTemplate(
        (
            ("port", "port the container listens on", "{port}"),
            ("path", "path to POST questions to", PLACEHOLDER_PATH),
        ),
        _docker,
    ),
}


def default_settings(port: int) -> dict[str, str]:
    """Every kind's settings at their defaults, for the port the repository suggests."""
    return {
        setting: default.format(port=port)
        for template in TARGET_TEMPLATES.values()
        for setting, _question, default in template.asks
    }


def target_template(kind: str) -> TargetTemplate:
    """The entry of `kind`; a UserError naming the kinds when it has none."""
    template = TARGET_TEMPLATES.get(kind)
    if template is None or kind not in TARGET_CONFIGS:
        known = ", ".join(kind for kind in TARGET_CONFIGS if kind in TARGET_TEMPLATES)
        raise UserError(f"unknown target kind {kind!r}: rag-ci init writes a target of kind {known}")
    return template


def kinds_question() -> str:
    """`init`'s question, the kinds with their summaries: "python (a function), command (...)"."""
    kinds = ", ".join(f"{kind} ({config.summary})" for kind, config in TARGET_CONFIGS.items())
    return f"How does rag-ci reach your RAG? {kinds}"
