"""What the commands print, made inert for a CI runner that parses the output (rag_ci.safety.logsafe).

The command line runs in CI too (`run: rag-ci run ...` in a GitHub workflow), where a
report, a policy preview or an error quoting a question id would otherwise be read as a
workflow command. Every command prints through `echo`; JSON goes through `echo_json`,
which keeps the data as it is.

At a person's terminal the same text could carry escape sequences (a document's, a
question's, an answer's): `echo` writes every C0/C1 control (ESC first) and every bidi or
zero-width control as visible `\\xNN` / `\\uXXXX` (rag_ci.core.base.text.visible_controls).
Only rag-ci's own coloured report (rag_ci.cli.terminal, whose untrusted parts went through
the same function) is printed `styled`, its colours kept.
"""

from __future__ import annotations

import click

from rag_ci.core.base.text import visible_controls
from rag_ci.safety.logsafe import neutralise


def echo(text: str = "", *, err: bool = False, styled: bool = False) -> None:
    click.echo(neutralise(text if styled else visible_controls(text, keep="\t\n\r")), err=err)


def echo_json(text: str) -> None:
    """JSON from json.dumps: control characters are escaped already and no line starts with
    `::`; `##[` can only sit inside a string, where `\\u005b` is the same `[`."""
    click.echo(text.replace("##[", "##\\u005b"))
