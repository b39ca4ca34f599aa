"""The gate's running command `run` (registered by rag_ci.cli; `validate` is in rag_ci.cli.validate);
`compare` and `report`, and the report's rendering `run` shares with them, are in rag_ci.cli.compare."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_ci.cli.compare import (
    FORMAT_HELP,
    accepted_entries,
    emit_comparison,
    history_option,
    read_history,
    render_report,
    resolve_format,
    warn_skipped_history_lines,
)
from rag_ci.cli.echo import echo
from rag_ci.cli.errors import EXIT_CODES, user_errors
from rag_ci.cli.validate import config_option
from rag_ci.core.results import RunResult
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.files.lock import OutputLock
from rag_ci.files.results_file import keep_until_exit, load_results, save_results
from rag_ci.gate import GateOptions, PinnedProject, decide, prepare

if TYPE_CHECKING:
    from rag_ci.core.config import Config
    from rag_ci.files.project import Project


def _parse_shard(_ctx, _param, value: str | None) -> tuple[int, int] | None:
    from rag_ci.core.questionset.shards import ShardError, parse_shard

    try:
        return None if value is None else parse_shard(value)
    except ShardError as exc:
        raise click.BadParameter(str(exc)) from None


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
    "--junit",
    is_flag=True,
    help="Also write junit.xml (JUnit XML for any CI, docs/other-ci.md) beside --output.",
)
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
@history_option
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
    junit: bool,
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
    _refuse_the_placeholder_route(project)
    if judge_spec:
        project = _with_judge(project, judge_spec, config_path)
    base = keep_until_exit(load_results(baseline, what="baseline")) if baseline else None
    if samples is None:  # a run compared with a baseline is a PR's run; one without may become the baseline
        samples = 1 if base is not None else project.config.baseline.samples
    from rag_ci.files.accepted_file import accepted_path

    accepted = (
        accepted_entries(accepted_path(project.config, config_path), required=False)
        if base is not None
        else ()
    )
    history = read_history(history_file)

    options = GateOptions(pin_policy=policy == "baseline", shard=shard)
    # Held for the whole run; also proves the output can be written before any question is asked.
    with OutputLock(output):
        pinned = prepare(project, base, accepted=accepted, options=options)
        _say_what_the_pin_changed(pinned)
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
    if junit:
        from rag_ci.cli.junit_file import write_junit_beside

        echo(f"[rag-ci] JUnit report in {write_junit_beside(output, outcome)}", err=True)
    warn_skipped_history_lines(history, history_file)
    head = outcome.head
    _summarise_the_run(head, output)
    if base is None:
        if fmt != "json":  # the JSON format is the comparison's, and there is none
            echo("".join(render_report(head, None, fmt, history, None)), styled=fmt == "terminal")
        if outcome.exit_code:  # a routing leak gates without a baseline too
            echo(f"[rag-ci] {outcome.notice}", err=True)
            sys.exit(outcome.exit_code)
        return
    emit_comparison(outcome, fmt, None, history, base)
    sys.exit(outcome.exit_code)


def _refuse_the_placeholder_route(project: Project) -> None:
    """A docker target still on the route placeholder `init` wrote: every question would get a 404."""
    from rag_ci.cli.validate_target import placeholder_problems

    problems = placeholder_problems(project.config.target, project.config_path)
    if problems:
        raise RagCiError(problems[0])


def _with_judge(project: Project, judge_spec: str, config_path: Path) -> Project:
    """The project judged by `--judge PROVIDER:MODEL[@BASE_URL]` instead of its config's judge."""
    from rag_ci.core.config import JudgeConfig
    from rag_ci.judges.build import parse_judge_option

    project = project.with_judge(
        JudgeConfig(
            **{**project.config.judge.model_dump(exclude_unset=True), **parse_judge_option(judge_spec)}
        )
    )
    _refuse_a_judge_with_nothing_to_judge(project.config, judge_spec, config_path)
    return project


def _say_what_the_pin_changed(pinned: PinnedProject) -> None:
    """What gating under the baseline's policy left out of this config, before any question is asked."""
    if pinned.policy_changes:
        echo(
            "[rag-ci] this config changes the baseline's gate (not applied; --policy config applies it): "
            + "; ".join(pinned.policy_changes),
            err=True,
        )
    if pinned.notice:
        echo(f"[rag-ci] {pinned.notice}", err=True)


def _summarise_the_run(head: RunResult, output: Path) -> None:
    """The run's one-line count on stderr; a broken run stops here (exit 2), its file kept for diagnosis."""
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
