"""The gate's commands: `validate`, `run`, `compare`, `report` (registered by rag_ci.cli)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_ci.cli.echo import echo, echo_json
from rag_ci.cli.errors import EXIT_CODES, VALIDATE_EXIT_CODES, user_errors
from rag_ci.core.base.yamlsrc import no_cyclic_gc
from rag_ci.core.reporting.render import Commits, html_chunks, render_markdown
from rag_ci.core.results import RunResult
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.files.atomic import check_output_path, write_chunks_atomic
from rag_ci.files.lock import OutputLock
from rag_ci.files.results_file import keep_until_exit, load_results, save_results
from rag_ci.gate import Comparison, GateOptions, GateOutcome, History, Verdict, compare_runs, decide, prepare

if TYPE_CHECKING:
    from rag_ci.core.config import Config


def _parse_shard(_ctx, _param, value: str | None) -> tuple[int, int] | None:
    from rag_ci.core.questionset.shards import ShardError, parse_shard

    try:
        return None if value is None else parse_shard(value)
    except ShardError as exc:
        raise click.BadParameter(str(exc)) from None


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default="rag-ci.yml",
    show_default=True,
    help="rag-ci.yml to use.",
)


@click.command(epilog=VALIDATE_EXIT_CODES)
@config_option
@click.option(
    "--coverage",
    "show_coverage",
    is_flag=True,
    help="Also report corpora and documents (of corpora_dir, or a corpus's path:) no question cites, and thin tags.",
)
@click.option(
    "--min-tag-questions",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="With --coverage: a tag with fewer questions than this is reported.",
)
@user_errors
def validate(config_path: Path, show_coverage: bool, min_tag_questions: int) -> None:
    """Check the config, the question set and the routing, without calling anything.

    Drafts (`status: draft`, from `rag-ci questions import` or `generate`) are refused and
    listed, machine-written ones with their writer. Questions citing a document that no
    longer exists are warned about."""
    from rag_ci.core.questionset.documents import missing_citations
    from rag_ci.files.corpus_files import corpus_folders, links_outside_note, read_corpora
    from rag_ci.files.project import load_project

    project = load_project(config_path)
    questions = project.questions.questions
    cross = sum(1 for q in questions if len(q.doc_id) > 1)
    refusals = sum(1 for q in questions if q.is_refusal)
    written = sum(1 for q in questions if q.provenance is not None)
    echo(
        f"ok: {len(questions)} questions (v{project.questions.version}, {project.questions.content_hash}), "
        f"{len(project.corpora)} corpora ({', '.join(project.corpora)}), {cross} cross-corpus, {refusals} out-of-scope"
        + (f", {written} machine-written and reviewed" if written else "")
        + f"; target {project.config.target.kind}; judge {project.config.judge.provider}"
    )
    files = read_corpora(corpus_folders(project.root, project.corpora), content=False)  # names only
    if note := links_outside_note(files.links_outside + project.links_outside):
        echo(note, err=True)
    for qid, source in missing_citations(((q.id, q.sources) for q in questions), files.index):
        echo(
            f"warning: {qid} cites {source}, which no document of corpus '{source.split('/', 1)[0]}' "
            f"matches (removed or renamed?): its reference may be stale",
            err=True,
        )
    for field, name in project.config.target.env_references():
        if name not in os.environ:
            echo(
                f"warning: {field} refers to ${{{name}}}, which is not set here: a run without it stops at start "
                f"(exit 2); set it, or name another variable",
                err=True,
            )
    if show_coverage:
        from rag_ci.core.questionset.coverage import coverage, render_coverage

        echo(render_coverage(coverage(project.questions, project.corpora, files.paths(), min_tag_questions)))


def _history(history_file: Path | None) -> History:
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


def _render(
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


def _accepted(accepted_file: Path | None, *, required: bool) -> tuple:
    """The accepted file's entries (docs/accepted.md): the regressions they list pass the gate."""
    from rag_ci.files.accepted_file import read_accepted

    return () if accepted_file is None else read_accepted(accepted_file, required=required)


def _decided(outcome: GateOutcome) -> Comparison:
    """The comparison of an outcome, or the reason there is none as the user's error (exit 2)."""
    if outcome.comparison is None or outcome.verdict == Verdict.INCOMPATIBLE:
        raise RagCiError((outcome.notice or outcome.verdict).removeprefix("Not compared: "))
    return outcome.comparison


def _emit_comparison(
    outcome: GateOutcome, fmt: str, output: Path | None, history: History, base: RunResult | None = None
) -> None:
    comparison, head = _decided(outcome), outcome.head
    chunks = _render(head, comparison, fmt, history, output, calibration=list(outcome.calibration), base=base)
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


@click.command(epilog=EXIT_CODES)
@config_option
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    default="results.json",
    show_default=True,
    help="Where to write results.json.",
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="A baseline results.json: compare with it and exit like `compare`; "
    "a question that errors now keeps its last known good verdict from it (docs/gate.md).",
)
@click.option(
    "--resume", is_flag=True, help="Continue an interrupted run; finished questions are not asked again."
)
@click.option(
    "--full", "--no-cache", "full", is_flag=True, help="Ignore the verdict cache: re-judge every answer."
)
@click.option(
    "--judge",
    "judge_spec",
    metavar="PROVIDER:MODEL[@BASE_URL]",
    help="Override the config's judge, e.g. openai-compatible:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1",
)
@click.option(
    "--shard",
    callback=_parse_shard,
    metavar="I/N",
    help="Run a deterministic 1/N slice of the questions (merge shards with `rag-ci merge`).",
)
@click.option("--no-build", is_flag=True, help="Skip the target's build steps.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html", "terminal"]),
    default=None,
    help="Format of the report printed (compared with --baseline). " + FORMAT_HELP,
)
@click.option(
    "--progress/--no-progress", default=True, help="Progress bar on a terminal, periodic lines otherwise."
)
@click.option(
    "--samples",
    type=click.IntRange(1, 15),
    default=None,
    help="Answers per question, for a baseline that knows each pass rate (default: 1, or the config's "
    "baseline.samples without --baseline). See docs/noise.md.",
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="An eval_history.jsonl: the report shows the trend of its last 10 runs; its known-flaky questions need stronger evidence (docs/noise.md).",
)
@click.option(
    "--policy",
    type=click.Choice(["baseline", "config"]),
    default="baseline",
    show_default=True,
    help="With --baseline: gate under the baseline's recorded policy (gate, metrics, judge), previewing this "
    "config's changes, or under this config's own (metrics defined differently are then not comparable).",
)
@click.option(
    "--verbose",
    is_flag=True,
    default=None,
    help="Show the build steps' and the image build's output (default: only a failing one's last lines; "
    "RAG_CI_VERBOSE=1 does the same).",
)
@user_errors
def run(
    config_path: Path,
    output: Path,
    baseline: Path | None,
    resume: bool,
    full: bool,
    judge_spec: str | None,
    shard: tuple[int, int] | None,
    no_build: bool,
    fmt: str,
    progress: bool,
    samples: int | None,
    policy: str,
    history_file: Path | None,
    verbose: bool | None,
) -> None:
    """Build and start the target, replay every question, score, write results.json, print the report
    (compared with --baseline when given; its accepted file, gate.accepted, applies)."""
    from rag_ci.files.project import load_project
    from rag_ci.run.engine import RunOptions, run_project

    fmt = resolve_format(fmt, None)
    project = load_project(config_path)
    if judge_spec:
        from rag_ci.core.config import JudgeConfig
        from rag_ci.judges.build import parse_judge_option

        project = project.with_judge(
            JudgeConfig(
                **{**project.config.judge.model_dump(exclude_unset=True), **parse_judge_option(judge_spec)}
            )
        )
        _refuse_a_judge_with_nothing_to_judge(project.config, judge_spec, config_path)
    base = keep_until_exit(load_results(baseline, what="baseline")) if baseline else None
    if samples is None:  # a run compared with a baseline is a PR's run; one without may become the baseline
        samples = 1 if base is not None else project.config.baseline.samples
    from rag_ci.files.accepted_file import accepted_path

    accepted = (
        _accepted(accepted_path(project.config, config_path), required=False) if base is not None else ()
    )
    history = _history(history_file)

    options = GateOptions(pin_policy=policy == "baseline", shard=shard)
    # Held for the whole run; also proves the output can be written before any question is asked.
    with OutputLock(output):
        pinned = prepare(project, base, accepted=accepted, options=options)
        if pinned.policy_changes:
            echo(
                "[rag-ci] this config changes the baseline's gate (not applied; --policy config applies it): "
                + "; ".join(pinned.policy_changes),
                err=True,
            )
        if pinned.notice:
            echo(f"[rag-ci] {pinned.notice}", err=True)
        head = asyncio.run(
            run_project(
                pinned.project,
                RunOptions(
                    output=output,
                    baseline=base,
                    resume=resume,
                    full=full,
                    progress=progress,
                    shard=shard,
                    build=not no_build,
                    samples=samples,
                    verbose=verbose or None,
                    confirm_each=pinned.confirm_each,
                ),
            )
        )
        outcome = decide(pinned, base, head, accepted=accepted, history=history, options=options)
        if outcome.carried:  # the run gained the baseline's last good verdicts of its errored questions
            save_results(output, outcome.head)
    warn_skipped_history_lines(history, history_file)
    head = outcome.head
    agg = head.aggregates
    echo(
        f"[rag-ci] {agg.overall.passed}/{agg.overall.n} pass, {agg.overall.failed} fail, {agg.overall.errors} error, "
        f"{agg.overall.routing_errors} routing_error; p50 {((agg.latency_p50_s or 0) * 1000):.0f} ms; results in {output}",
        err=True,
    )
    if head.meta.broken:
        raise BrokenRun(
            f"this run is broken, not a result: {head.meta.broken}\n"
            f"{output} is written for diagnosis and marked `meta.broken`: it is never compared nor used as a baseline."
        )
    if base is None:
        if fmt != "json":  # the JSON format is the comparison's, and there is none
            echo("".join(_render(head, None, fmt, history, None)), styled=fmt == "terminal")
        if outcome.exit_code:  # a routing leak gates without a baseline too
            echo(f"[rag-ci] {outcome.notice}", err=True)
            sys.exit(outcome.exit_code)
        return
    _emit_comparison(outcome, fmt, None, history, base)
    sys.exit(outcome.exit_code)


def _refuse_a_judge_with_nothing_to_judge(config: Config, judge_spec: str, config_path: Path) -> None:
    """`--judge` with a `metrics:` block naming no judge metric would judge nothing, silently."""
    from rag_ci.core.config import JUDGE_METRICS

    if (
        not config.judge_enabled
        or config.metrics is None
        or any(name in JUDGE_METRICS for name in config.metrics)
    ):
        return
    raise RagCiError(
        f"--judge {judge_spec}: the `metrics:` block of {config_path} lists no judge metric, so nothing would be judged. "
        f"Add the judge metrics you want to `metrics:` (e.g. `faithfulness: {{threshold: 0.7}}`, `correctness: {{}}`; "
        f"all of them: {', '.join(JUDGE_METRICS)}), or remove `metrics:` to use the defaults, or drop --judge."
    )


@click.command("compare", epilog=EXIT_CODES)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["md", "json", "html", "terminal"]), default=None, help=FORMAT_HELP
)
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout."
)
@click.option(
    "--fail-on",
    type=click.Choice(["any_regression", "significant_drop", "never"]),
    help="Override the gate; default: BASE's recorded gate.fail_on (any_regression when it recorded none).",
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="An eval_history.jsonl: the report shows the trend of its last 10 runs; its known-flaky questions need stronger evidence (docs/noise.md).",
)
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
    history = _history(history_file)
    with (
        no_cyclic_gc()
    ):  # two loaded runs are millions of objects: a full collection is seconds, and finds nothing
        outcome = compare_runs(
            base_result,
            head_result,
            accepted=_accepted(accepted_file, required=True),
            history=history,
            options=GateOptions(fail_on=fail_on),
        )
        if head_result.meta.broken:
            raise BrokenRun(f"This run is broken, not a result: {head_result.meta.broken}")
        _emit_comparison(outcome, fmt, output, history, base_result)
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
    history = _history(history_file)
    base = keep_until_exit(load_results(baseline, what="baseline")) if baseline else None
    # A broken run is never compared, but its report is what shows what went wrong.
    with no_cyclic_gc():  # as in `compare`
        outcome = compare_runs(
            base, head, accepted=_accepted(accepted_file, required=True) if base else (), history=history
        )
        comparison = None if outcome.verdict in (Verdict.BROKEN, Verdict.BOOTSTRAP) else _decided(outcome)
        chunks = _render(
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
