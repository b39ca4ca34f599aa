"""The CLI's first screen: the gate's commands first, every summary whole (none cut with "...")."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.cli.help import SUMMARIES


def _listed(args: list[str]) -> list[tuple[str, str]]:
    """(name, summary) of each command listed by `rag-ci <args> --help`, at a terminal's 80 columns."""
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    listing = result.output.split("Commands:\n", 1)[1]
    rows = []
    for line in listing.splitlines():
        if not line.startswith("  ") or line.startswith("   "):
            break  # the epilog (exit codes) after the listing
        name, summary = line.strip().split(None, 1)
        rows.append((name, summary))
    return rows


@pytest.mark.parametrize("args", [[], ["questions"], ["audit"], ["history"]])
def test_no_summary_is_cut(args):
    rows = _listed(args)
    assert rows
    assert [row for row in rows if "..." in row[1] or "…" in row[1]] == []


def test_the_gate_commands_come_first():
    names = [name for name, _ in _listed([])]
    assert names[:4] == ["run", "compare", "report", "validate"]
    assert names.index("init") < names.index("questions") < names.index("schema")


def test_the_question_commands_follow_the_workflow():
    assert [name for name, _ in _listed(["questions"])][:4] == ["import", "generate", "review", "apply"]


def _commands(group: click.Group, prefix: str = ""):
    for name, command in group.commands.items():
        yield prefix + name
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")


def test_every_command_has_a_summary_that_fits_on_its_line():
    for name in _commands(cli):
        assert name in SUMMARIES, f"add a summary for `rag-ci {name}` to rag_ci/cli/help.py"
        assert len(SUMMARIES[name]) <= 80 - 2 - 11 - 2, name  # indent, the longest name, the gap
        assert re.fullmatch(r"[A-Z].*\.", SUMMARIES[name]), name
