"""How a GitHub Actions runner reads a step's output for workflow commands (a model for tests).

The real parser is the runner's ActionCommand (C#): V2 commands `::name props::data` on a
line whose trimmed text starts with `::`, legacy `##[name props]data` anywhere in a line, and
lines end at LF, CR LF or a bare CR.
"""

from __future__ import annotations

import re


def runner_commands(output: str) -> list[tuple[str, str]]:
    """The workflow commands a runner would obey in `output`, as (name, data)."""
    commands = []
    for line in re.split(r"\r\n|\r|\n", output):
        stripped = line.strip()
        if stripped.startswith("::"):
            head, _, data = stripped[2:].partition("::")
            commands.append((head.split(" ")[0], data))
        if (at := line.find("##[")) >= 0:
            head, _, data = line[at + 3 :].partition("]")
            commands.append((head.split(" ")[0] or "?", data))
    return commands
