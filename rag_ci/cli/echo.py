"""What the commands print, made inert for a CI runner that parses the output (rag_ci.safety.logsafe).

The command line runs in CI too (`run: rag-ci run ...` in a GitHub workflow), where a
report, a policy preview or an error quoting a question id would otherwise be read as a
workflow command. Every command prints through `echo`; JSON goes through `echo_json`,
which keeps the data as it is.
"""

from __future__ import annotations

import click

from rag_ci.safety.logsafe import neutralise


def echo(text: str = "", *, err: bool = False) -> None:
    click.echo(neutralise(text), err=err)


def echo_json(text: str) -> None:
    """JSON from json.dumps: control characters are escaped already and no line starts with
    `::`; `##[` can only sit inside a string, where `\\u005b` is the same `[`."""
    click.echo(text.replace("##[", "##\\u005b"))
