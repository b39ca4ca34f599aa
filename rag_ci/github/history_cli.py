"""`rag-ci history FILE`: the trend from a local eval_history.jsonl.

Get the file from the data branch with
`git fetch origin rag-ci-data && git show origin/rag-ci-data:eval_history.jsonl > eval_history.jsonl`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag_ci.core.history import parse_history, render_trend_text, trend


@click.command("history")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--last", default=20, show_default=True, type=click.IntRange(min=1), help="How many runs to show.")
@click.option("--json", "as_json", is_flag=True, help="Print the trend entries as JSON lines.")
def history(file: Path, last: int, as_json: bool) -> None:
    """Print the trend (pass rate, latency, cost) from an eval_history.jsonl."""
    entries = trend(parse_history(file.read_text(encoding="utf-8")), last=last)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(entry, sort_keys=True))
        return
    click.echo(render_trend_text(entries))
