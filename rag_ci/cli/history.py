"""`rag-ci history FILE`: the trend from a local eval_history.jsonl;
`rag-ci history append RESULTS --history FILE`: add the line the action adds on main.

Get the file from the data branch with
`git fetch origin rag-ci-data && git show origin/rag-ci-data:eval_history.jsonl > eval_history.jsonl`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag_ci.cli.echo import echo, echo_json
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.core.comparison.history import dump_line, history_line, read_history, render_trend_text, trend

EXIT_CODES = """\b
Exit codes:
  0  done
  2  unusable input: unreadable history or results file, a broken run
     (never a history line), history not writable
"""


class _HistoryGroup(click.Group):
    """`rag-ci history FILE` shows the trend (as before); `rag-ci history append ...` adds a line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group("history", cls=_HistoryGroup, epilog=EXIT_CODES)
def history() -> None:
    """The trend of main from an eval_history.jsonl (`rag-ci history FILE`), or add a line to it."""


@history.command("show", epilog=EXIT_CODES)
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--last", default=20, show_default=True, type=click.IntRange(min=1), help="How many runs to show."
)
@click.option("--json", "as_json", is_flag=True, help="Print the trend entries as JSON lines.")
@user_errors
def show(file: Path, last: int, as_json: bool) -> None:
    """Print the trend (pass rate, latency, cost) from an eval_history.jsonl."""
    try:
        records, problems = read_history(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{file}: cannot read the history: {exc}") from None
    if problems:
        echo(
            f"warning: {file}: skipped {len(problems)} unreadable line(s): " + "; ".join(problems[:10]),
            err=True,
        )
    entries = trend([entry for _, entry in records], last=last)
    if as_json:
        for entry in entries:
            echo_json(json.dumps(entry, sort_keys=True))
        return
    echo(render_trend_text(entries))


@history.command("append", epilog=EXIT_CODES)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--history",
    "history_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The eval_history.jsonl to append to (created when missing).",
)
@click.option(
    "--accepted",
    "accepted_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The accepted file in force on this run: its entries are recorded in the line.",
)
@click.option("--run-url", help="A link to the run that produced RESULTS.")
@click.option("--event", help="What triggered the run (push, schedule, ...).")
@user_errors
def append(
    results: Path, history_file: Path, accepted_file: Path | None, run_url: str | None, event: str | None
) -> None:
    """Append RESULTS' summary line (the one the action writes on main) to the history."""
    from rag_ci.errors import RagCiError
    from rag_ci.files.accepted_file import read_accepted
    from rag_ci.files.results_file import load_results
    from rag_ci.gate import accepted_in_force

    try:
        result = load_results(results)
        if result.meta.broken:
            raise RagCiError(
                f"{results} is a broken run, not a result ({result.meta.broken}): it is never a history line"
            )
        entries = read_accepted(accepted_file, required=True) if accepted_file else ()
        line = dump_line(
            history_line(result, run_url=run_url, event=event, accepted=accepted_in_force(entries, result))
        )
        existing = history_file.read_text(encoding="utf-8") if history_file.exists() else ""
        with history_file.open("a", encoding="utf-8") as out:
            if existing and not existing.endswith("\n"):
                out.write("\n")
            out.write(line + "\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{history_file}: {exc}") from None
    echo(f"appended a line for {(result.meta.git_sha or 'unknown commit')[:12]} to {history_file}", err=True)
