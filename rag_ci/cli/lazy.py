"""Commands imported when they are called, not when `rag-ci` starts (click's lazy-group pattern).

Importing every command's module at start-up brought the comparison, the rendering and the
config models into `rag-ci --version` (~1 s before anything happened, 2–3 s on a loaded
machine; issue 55). A group here knows its commands by name and by "module:attribute", and
imports a command's module only when that command is called (or its own `--help` asked);
its `--help` lists every command with its summary (rag_ci.cli.help.SUMMARIES) without
importing one. `python -m benchmarks` measures the start-up (benchmarks/cli_startup.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

from rag_ci.cli.help import SUMMARIES, ListedAsRegistered, summarise


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name: each a loaded command or the "module:attribute" that defines
    it, imported on first access. Its names (in order) are known without importing anything."""

    def __init__(self, where: dict[str, str], summary_prefix: str = "") -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}
        self._prefix = summary_prefix

    def is_loaded(self, name: str) -> bool:
        return name in self._loaded

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, _, attribute = self._where[name].partition(":")  # KeyError: no such command
            command = getattr(importlib.import_module(module), attribute)
            command.short_help = SUMMARIES.get(self._prefix + name, command.short_help)
            if isinstance(command, click.Group):  # its own commands' summaries, for its --help
                summarise(command, f"{self._prefix}{name} ")
            self._loaded[name] = command
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command
        self._where.setdefault(name, "")

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where


class LazyGroup(ListedAsRegistered):
    """A group whose commands are imported when called; `--help` lists them from SUMMARIES."""

    def __init__(self, *args: object, lazy: dict[str, str], summary_prefix: str = "", **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: LazyCommands = LazyCommands(lazy, summary_prefix)
        self._summary_prefix = summary_prefix

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing of `--help`, each command's summary from SUMMARIES: no command imported."""
        rows = []
        for name in self.list_commands(ctx):
            summary = SUMMARIES.get(self._summary_prefix + name)
            if summary is None or self.commands.is_loaded(name):
                command = self.commands[name]
                if command.hidden:
                    continue
                summary = command.get_short_help_str(formatter.width - 6 - len(name))
            rows.append((name, summary))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
