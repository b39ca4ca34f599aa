"""The gate's reading commands: `compare` and `report`, and the rendering of a report that `run`
shares with them (registered by rag_ci.cli)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from rag_ci.cli.echo import echo, echo_json
from rag_ci.cli.errors import EXIT_CODES, user_errors
from rag_ci.core.base.yamlsrc import no_cyclic_gc
from rag_ci.core.reporting.render import Commits, html_chunks, render_markdown
from rag_ci.core.results import RunResult
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.files.atomic import check_output_path, write_chunks_atomic
from rag_ci.files.results_file import keep_until_exit, load_results
from rag_ci.gate import Comparison, GateOptions, GateOutcome, History, Verdict, compare_runs


def read_history(history_file: Path | None) -> History:
    """--history as the gate reads it (no file: no trend, no known-flaky questions, no calibration line)."""
    if history_file is None:
        return History()
    try:
        return History.of_text(history_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RagCiError(f"{history_file}: cannot read the history: {exc}") from None


def warn_skipped_history_lines(history: History, history_file: Path | None) -> None:
    """A bad history line is skipped, never fatal: say which, once the history was read."""
    if history_file is not None and history.problems:
        echo(
            f"warning: {history_file}: skipped {len(history.problems)} unreadable line(s): "
            + "; ".join(history.problems[:10]),
            err=True,
        )


def render_report(
    head: RunResult,
    comparison: Comparison | None,
    fmt: str,
    history: History,
    output: Path | None,
    notice: str | None = None,
    calibration: list | None = None,
    base: RunResult | None = None,
    measured: tuple = (),
) -> Iterable[str]:
    """The report in pieces: the HTML page as Jinja makes it (written as it comes, never held
    whole: ~20 MB at 50,000 questions), markdown and JSON as one piece."""
    if fmt == "json":
        return (json.dumps(comparison.to_dict() if comparison else {}, indent=2, default=str) + "\n",)
    if fmt == "junit":  # docs/other-ci.md
        from rag_ci.core.reporting.junit import render_junit

        return (render_junit(head, comparison),)
    if fmt == "terminal":
        from rag_ci.cli.terminal import terminal_report

        return (terminal_report(head, comparison, notice=notice).rstrip("\n"),)
    commits = Commits.of_runs(base, head) if base is not None else None  # the shas the two files recorded
    if fmt == "html":
        return html_chunks(
            head, comparison, history=history.entries, calibration=calibration, commits=commits
        )
    # The full report: beside a markdown file written with -o, the HTML rendered by `report --format html`.
    html_hint = str(output.with_suffix(".html")) if output is not None and output.suffix == ".md" else None
    return (
        render_markdown(
            head,
            comparison,
            notice=notice,
            trend=history.trend(),
            report_path=html_hint,
            calibration=calibration,
            commits=commits,
            measured=measured,
        ),
    )


FORMAT_HELP = "Default: the terminal view on a terminal, else md (the PR comment's markdown, as it is)."


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def resolve_format(fmt: str | None, output: Path | None) -> str:
    """--format as asked; unasked, the terminal view when the report goes to a terminal, else
    markdown (a pipe, a file, a CI log get the markdown, byte for byte as before)."""
    if fmt is not None:
        return fmt
    return "terminal" if output is None and _stdout_is_terminal() else "md"


def accepted_entries(accepted_file: Path | None, *, required: bool) -> tuple:
    """The accepted file's entries (docs/accepted.md): the regressions they list pass the gate."""
    from rag_ci.files.accepted_file import read_accepted

    return () if accepted_file is None else read_accepted(accepted_file, required=required)


def _decided(outcome: GateOutcome) -> Comparison:
    """The comparison of an outcome, or the reason there is none as the user's error (exit 2)."""
    if outcome.comparison is None or outcome.verdict == Verdict.INCOMPATIBLE:
        raise RagCiError((outcome.notice or outcome.verdict).removeprefix("Not compared: "))
    return outcome.comparison


def emit_comparison(
    outcome: GateOutcome, fmt: str, output: Path | None, history: History, base: RunResult | None = None
) -> None:
    comparison, head = _decided(outcome), outcome.head
    chunks = render_report(
        head, comparison, fmt, history, output, calibration=list(outcome.calibration), base=base
    )
    if output is not None:
        write_chunks_atomic(output, chunks)
        echo(
            f"{comparison.verdict}: {len(comparison.regressions)} regressions, {len(comparison.worse)} worse, "
            f"{len(comparison.leaks)} other routing leaks, {len(comparison.gains)} gains, {len(comparison.accepted)} accepted; "
            f"report in {output}",
            err=True,
        )
    elif fmt == "json":
        echo_json("".join(chunks))
    else:
        echo("".join(chunks), styled=fmt == "terminal")


# `run` and `compare` read a history the same way (report's own --history says what it shows).
history_option = click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="An eval_history.jsonl: the report shows the trend of its last 10 runs; its known-flaky questions need stronger evidence (docs/noise.md).",
)


@click.command("compare", epilog=EXIT_CODES)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html", "terminal", "junit"]),
    default=None,
    help=FORMAT_HELP + " junit: JUnit XML for any CI (docs/other-ci.md).",
)
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout."
)
@click.option(
    "--fail-on",
    type=click.Choice(["any_regression", "significant_drop", "never"]),
    help="Override the gate; default: BASE's recorded gate.fail_on (any_regression when it recorded none).",
)
@history_option
@click.option(
    "--accepted",
    "accepted_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An accepted file (docs/accepted.md): the regressions it lists, with a reason, pass the gate.",
)
@user_errors
def compare_cmd(
    base: Path,
    head: Path,
    fmt: str,
    output: Path | None,
    fail_on: str | None,
    history_file: Path | None,
    accepted_file: Path | None,
) -> None:
    """Compare HEAD results with BASE results, question by question, under BASE's recorded gate.

    Metrics defined differently in the two files (threshold, k, criteria, judge) are
    listed as not comparable and left out; all the others are compared and gated."""
    fmt = resolve_format(fmt, output)
    if output is not None:
        check_output_path(output)
    base_result = keep_until_exit(load_results(base, what="baseline"))
    head_result = keep_until_exit(load_results(head, what="results file"))
    history = read_history(history_file)
    with (
        no_cyclic_gc()
    ):  # two loaded runs are millions of objects: a full collection is seconds, and finds nothing
        outcome = compare_runs(
            base_result,
            head_result,
            accepted=accepted_entries(accepted_file, required=True),
            history=history,
            options=GateOptions(fail_on=fail_on),
        )
        if head_result.meta.broken:
            raise BrokenRun(f"This run is broken, not a result: {head_result.meta.broken}")
        emit_comparison(outcome, fmt, output, history, base_result)
    warn_skipped_history_lines(history, history_file)
    sys.exit(outcome.exit_code)


@click.command(epilog=EXIT_CODES)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Compare with this baseline in the report (and exit like `compare`).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["md", "html", "terminal"]), default=None, help=FORMAT_HELP
)
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout."
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="An eval_history.jsonl: the report shows the trend of its last 10 runs and the judge's calibration recorded there (docs/judges.md).",
)
@click.option(
    "--accepted",
    "accepted_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --baseline: an accepted file (docs/accepted.md).",
)
@user_errors
def report(
    results: Path,
    baseline: Path | None,
    fmt: str,
    output: Path | None,
    history_file: Path | None,
    accepted_file: Path | None,
) -> None:
    """Render the human report (markdown for PR comments, standalone HTML).

    Exits like `compare` with --baseline (1 when the gate fails), and 2 for a broken run,
    after printing its report."""
    fmt = resolve_format(fmt, output)
    if output is not None:
        check_output_path(output)
    head = keep_until_exit(load_results(results))
    history = read_history(history_file)
    base = keep_until_exit(load_results(baseline, what="baseline")) if baseline else None
    # A broken run is never compared, but its report is what shows what went wrong.
    with no_cyclic_gc():  # as in `compare`
        outcome = compare_runs(
            base,
            head,
            accepted=accepted_entries(accepted_file, required=True) if base else (),
            history=history,
        )
        comparison = None if outcome.verdict in (Verdict.BROKEN, Verdict.BOOTSTRAP) else _decided(outcome)
        chunks = render_report(
            head,
            comparison,
            fmt,
            history,
            output,
            calibration=list(outcome.calibration),
            base=base,
            measured=outcome.measured,
        )
        if output is not None:
            write_chunks_atomic(output, chunks)
        else:
            text = "".join(chunks)
    warn_skipped_history_lines(history, history_file)
    if output is not None:
        echo(f"report written to {output}", err=True)
    else:
        echo(text, styled=fmt == "terminal")
    sys.exit(outcome.exit_code)
