"""`rag-ci init`'s `target:` block, one entry per target kind (rag_ci.core.config.TARGET_CONFIGS).

An entry says which settings `init` asks for that kind (after the kind itself) and writes the
block from them; every value the user may need to change is marked. A kind without an entry is
refused, never written as another kind's block (tests/unit/test_target_kinds.py keeps the
entries and the kinds the same).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from rag_ci.cli.errors import UserError
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
    found = (
        f"   # {settings['found']}: fill in the path that answers a question" if settings.get("found") else ""
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
    return (
        f"target:\n  kind: docker\n  dockerfile: {settings.get('dockerfile', 'Dockerfile')}\n"
        f"  port: {int(settings['port'])}\n  path: {json.dumps(settings['path'])}   # POSTed {{id, question, corpora}}\n"
        "  health: /health\n"
    )


TARGET_TEMPLATES: dict[str, TargetTemplate] = {
    "python": TargetTemplate((("entry", "module:function that answers", "app:answer"),), _python),
    "command": TargetTemplate((("command", "command to start", "python rag_server.py"),), _command),
    "http": TargetTemplate((("url", "URL to POST questions to", "http://127.0.0.1:{port}/query"),), _http),
    "docker": TargetTemplate(
        (
            ("port", "port the container listens on", "{port}"),
            ("path", "path to POST questions to", "/query"),
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
