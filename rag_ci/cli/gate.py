"""The gate's commands: `validate`, `run`, `compare`, `report` (registered by rag_ci.cli)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_ci.core.comparison.carry import carry_forward
from rag_ci.core.comparison.compare import Comparison, compare
from rag_ci.core.reporting.render import render_html, render_markdown
from rag_ci.core.scoring.results import RunResult
from rag_ci.cli.errors import EXIT_CODES, user_errors
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.storage import OutputLock, check_output_path, load_results, save_results, write_text_atomic

if TYPE_CHECKING:
    from rag_ci.core.questionset.config import Config


def _parse_shard(_ctx, _param, value: str | None) -> tuple[int, int] | None:
    from rag_ci.core.questionset.shards import ShardError, parse_shard

    try:
        return None if value is None else parse_shard(value)
    except ShardError as exc:
        raise click.BadParameter(str(exc)) from None


config_option = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default="rag-ci.yml", show_default=True, help="rag-ci.yml to use."
)


@click.command(epilog=EXIT_CODES)
@config_option
@click.option("--coverage", "show_coverage", is_flag=True,
              help="Also report corpora and documents (of corpora_dir) no question cites, and thin tags.")
@click.option("--min-tag-questions", type=click.IntRange(1), default=3, show_default=True,
              help="With --coverage: a tag with fewer questions than this is reported.")
@user_errors
def validate(config_path: Path, show_coverage: bool, min_tag_questions: int) -> None:
    """Check the config, the question set and the routing, without calling anything.

    Drafts (`status: draft`, from `rag-ci questions import`) are refused and listed."""
    from rag_ci.project import load_project

    project = load_project(config_path)
    questions = project.questions.questions
    cross = sum(1 for q in questions if len(q.doc_id) > 1)
    refusals = sum(1 for q in questions if q.is_refusal)
    click.echo(
        f"ok: {len(questions)} questions (v{project.questions.version}, {project.questions.content_hash}), "
        f"{len(project.corpora)} corpora ({', '.join(project.corpora)}), {cross} cross-corpus, {refusals} out-of-scope; "
        f"target {project.config.target.kind}; judge {project.config.judge.provider}"
    )
    for field, name in project.config.target.env_references():
        if name not in os.environ:
            click.echo(f"warning: {field} refers to ${{{name}}}, which is not set here: a run without it stops at start "
                       f"(exit 2); set it, or name another variable", err=True)
    if show_coverage:
        from rag_ci.core.questionset.coverage import coverage, render_coverage

        documents = {name: _corpus_documents(Path(spec.path)) for name, spec in project.corpora.items() if spec.path}
        click.echo(render_coverage(coverage(project.questions, project.corpora, documents, min_tag_questions)))


def _corpus_documents(folder: Path) -> list[str]:
    """The documents of a corpus folder (corpora_dir), as paths inside it; config.yml and hidden files aside."""
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*")
        if p.is_file() and p.name != "config.yml" and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def _read_history(history_file: Path | None) -> list[dict]:
    from rag_ci.core.comparison.history import parse_history

    if history_file is None:
        return []
    try:
        return parse_history(history_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RagCiError(f"{history_file}: cannot read the history: {exc}") from None


def _render(head: RunResult, comparison: Comparison | None, fmt: str, history: list[dict], output: Path | None,
            calibration: list | None = None) -> str:
    from rag_ci.core.comparison.history import trend_summary

    if fmt == "json":
        return json.dumps(comparison.to_dict() if comparison else {}, indent=2, default=str) + "\n"
    if fmt == "html":
        return render_html(head, comparison, history=history, calibration=calibration)
    # The full report: beside a markdown file written with -o, the HTML rendered by `report --format html`.
    html_hint = str(output.with_suffix(".html")) if output is not None and output.suffix == ".md" else None
    return render_markdown(head, comparison, trend=trend_summary(history) if history else None, report_path=html_hint,
                           calibration=calibration)


def _with_accepted(comparison: Comparison, head: RunResult, accepted_file: Path | None, *, required: bool) -> Comparison:
    """The comparison with the accepted file's regressions out of the gate (docs/accepted.md)."""
    from rag_ci.accepted_file import read_accepted
    from rag_ci.core.review.accepted import apply_accepted

    if accepted_file is None:
        return comparison
    entries = read_accepted(accepted_file, required=required)
    return apply_accepted(comparison, entries, {q.id: q.question_hash for q in head.questions})


def _emit_comparison(comparison: Comparison, head: RunResult, fmt: str, output: Path | None, history: list[dict] | None = None,
                     calibration: list | None = None) -> None:
    text = _render(head, comparison, fmt, history or [], output, calibration)
    if output is not None:
        write_text_atomic(output, text)
        click.echo(
            f"{comparison.verdict}: {len(comparison.regressions)} regressions, {len(comparison.worse)} worse, "
            f"{len(comparison.leaks)} other routing leaks, {len(comparison.gains)} gains, {len(comparison.accepted)} accepted; "
            f"report in {output}",
            err=True,
        )
    else:
        click.echo(text)


@click.command(epilog=EXIT_CODES)
@config_option
@click.option("--output", "-o", type=click.Path(path_type=Path), default="results.json", show_default=True, help="Where to write results.json.")
@click.option("--baseline", type=click.Path(path_type=Path), help="A baseline results.json: compare with it and exit like `compare`; "
              "a question that errors now keeps its last known good verdict from it (docs/gate.md).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run; finished questions are not asked again.")
@click.option("--full", "--no-cache", "full", is_flag=True, help="Ignore the verdict cache: re-judge every answer.")
@click.option("--judge", "judge_spec", metavar="PROVIDER:MODEL[@BASE_URL]", help="Override the config's judge, e.g. openai-compatible:qwen2.5-7b-instruct@http://127.0.0.1:8000/v1")
@click.option("--shard", callback=_parse_shard, metavar="I/N", help="Run a deterministic 1/N slice of the questions (merge shards with `rag-ci merge`).")
@click.option("--no-build", is_flag=True, help="Skip the target's build steps.")
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md", show_default=True, help="Format of the comparison printed with --baseline.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on a terminal, periodic lines otherwise.")
@click.option("--samples", type=click.IntRange(1, 15), default=None,
              help="Answers per question, for a baseline that knows each pass rate (default: 1, or the config's "
                   "baseline.samples without --baseline). See docs/noise.md.")
@click.option("--history", "history_file", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An eval_history.jsonl: the report shows the trend of its last 10 runs; its known-flaky questions need stronger evidence (docs/noise.md).")
@click.option("--policy", type=click.Choice(["baseline", "config"]), default="baseline", show_default=True,
              help="With --baseline: gate under the baseline's recorded policy (gate, metrics, judge), previewing this "
                   "config's changes, or under this config's own (metrics defined differently are then not comparable).")
@click.option("--verbose", is_flag=True, default=None,
              help="Show the build steps' and the image build's output (default: only a failing one's last lines; "
                   "RAG_CI_VERBOSE=1 does the same).")
@user_errors
def run(config_path: Path, output: Path, baseline: Path | None, resume: bool, full: bool, judge_spec: str | None,
        shard: tuple[int, int] | None, no_build: bool, fmt: str, progress: bool, samples: int | None, policy: str,
        history_file: Path | None, verbose: bool | None) -> None:
    """Build and start the target, replay every question, score, write results.json, print the report
    (compared with --baseline when given; its accepted file, gate.accepted, applies)."""
    from rag_ci.engine import RunOptions, run_project
    from rag_ci.project import load_project

    project = load_project(config_path)
    if judge_spec:
        from rag_ci.judges.build import parse_judge_option
        from rag_ci.core.questionset.config import JudgeConfig

        project = project.with_judge(JudgeConfig(**{**project.config.judge.model_dump(exclude_unset=True), **parse_judge_option(judge_spec)}))
        _refuse_a_judge_with_nothing_to_judge(project.config, judge_spec, config_path)
    base = load_results(baseline, what="baseline") if baseline else None
    pinned = None
    if base is not None and policy == "baseline":
        from rag_ci.core.comparison.policy import pin_to_baseline

        pinned = pin_to_baseline(project.config, base.meta)
        project = dataclasses.replace(project, config=pinned.config)
        if pinned.changes:
            click.echo("[rag-ci] this config changes the baseline's gate (not applied; --policy config applies it): "
                       + "; ".join(pinned.changes), err=True)
        if pinned.notice:
            click.echo(f"[rag-ci] {pinned.notice}", err=True)
    if samples is None:  # a run compared with a baseline is a PR's run; one without may become the baseline
        samples = 1 if base is not None else project.config.baseline.samples
    # Held for the whole run; also proves the output can be written before any question is asked.
    with OutputLock(output):
        head = asyncio.run(run_project(project, RunOptions(output=output, baseline=base, resume=resume, full=full, progress=progress,
                                                           shard=shard, build=not no_build, samples=samples,
                                                           verbose=verbose or None)))
        if base is not None and not head.meta.broken:  # keep the last known good verdicts (docs/gate.md)
            carried = carry_forward(base, head)
            if carried is not head:
                head = carried
                save_results(output, head)
    agg = head.aggregates
    click.echo(
        f"[rag-ci] {agg.overall.passed}/{agg.overall.n} pass, {agg.overall.failed} fail, {agg.overall.errors} error, "
        f"{agg.overall.routing_errors} routing_error; p50 {((agg.latency_p50_s or 0) * 1000):.0f} ms; results in {output}",
        err=True,
    )
    if head.meta.broken:
        raise BrokenRun(
            f"this run is broken, not a result: {head.meta.broken}\n"
            f"{output} is written for diagnosis and marked `meta.broken`: it is never compared nor used as a baseline."
        )
    history = _read_history(history_file)
    if base is None:
        if fmt != "json":  # the JSON format is the comparison's, and there is none
            click.echo(_render(head, None, fmt, history, None))
        return
    if shard is not None:
        from rag_ci.core.questionset.shards import restrict_to_shard

        base = restrict_to_shard(base, shard)
    from rag_ci.accepted_file import accepted_path
    from rag_ci.core.comparison.history import known_flaky

    comparison = compare(base, head, fail_on=project.config.gate.fail_on, gate=project.config.gate,
                         known_flaky=known_flaky(history) if history else None)
    if pinned is not None:
        comparison = dataclasses.replace(comparison, policy_changes=pinned.changes)
    comparison = _with_accepted(comparison, head, accepted_path(project.config, config_path), required=False)
    _emit_comparison(comparison, head, fmt, None, history)
    sys.exit(1 if comparison.verdict == "fail" else 0)


def _refuse_a_judge_with_nothing_to_judge(config: Config, judge_spec: str, config_path: Path) -> None:
    """`--judge` with a `metrics:` block naming no judge metric would judge nothing, silently."""
    from rag_ci.core.questionset.config import JUDGE_METRICS

    if not config.judge_enabled or config.metrics is None or any(name in JUDGE_METRICS for name in config.metrics):
        return
    raise RagCiError(
        f"--judge {judge_spec}: the `metrics:` block of {config_path} lists no judge metric, so nothing would be judged. "
        f"Add the judge metrics you want to `metrics:` (e.g. `faithfulness: {{threshold: 0.7}}`, `correctness: {{}}`; "
        f"all of them: {', '.join(JUDGE_METRICS)}), or remove `metrics:` to use the defaults, or drop --judge."
    )


@click.command("compare", epilog=EXIT_CODES)
@click.argument("base", type=click.Path(path_type=Path))
@click.argument("head", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout.")
@click.option("--fail-on", type=click.Choice(["any_regression", "significant_drop", "never"]),
              help="Override the gate; default: BASE's recorded gate.fail_on (any_regression when it recorded none).")
@click.option("--history", "history_file", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An eval_history.jsonl: the report shows the trend of its last 10 runs; its known-flaky questions need stronger evidence (docs/noise.md).")
@click.option("--accepted", "accepted_file", type=click.Path(path_type=Path, dir_okay=False),
              help="An accepted file (docs/accepted.md): the regressions it lists, with a reason, pass the gate.")
@user_errors
def compare_cmd(base: Path, head: Path, fmt: str, output: Path | None, fail_on: str | None, history_file: Path | None,
                accepted_file: Path | None) -> None:
    """Compare HEAD results with BASE results, question by question, under BASE's recorded gate.

    Metrics defined differently in the two files (threshold, k, criteria, judge) are
    listed as not comparable and left out; all the others are compared and gated."""
    from rag_ci.core.comparison.history import known_flaky
    from rag_ci.core.comparison.policy import recorded_gate

    if output is not None:
        check_output_path(output)
    base_result = load_results(base, what="baseline")
    head_result = load_results(head, what="results file")
    gate = recorded_gate(base_result.meta)
    history = _read_history(history_file)
    comparison = compare(base_result, head_result, fail_on=fail_on or gate.fail_on, gate=gate,
                         known_flaky=known_flaky(history) if history else None)
    comparison = _with_accepted(comparison, head_result, accepted_file, required=True)
    _emit_comparison(comparison, head_result, fmt, output, history, calibration=_calibration(head_result, history_file))
    sys.exit(1 if comparison.verdict == "fail" else 0)


@click.command(epilog=EXIT_CODES)
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--baseline", type=click.Path(path_type=Path), help="Compare with this baseline in the report (and exit like `compare`).")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), default="md", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout.")
@click.option("--history", "history_file", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="An eval_history.jsonl: the report shows the trend of its last 10 runs and the judge's calibration recorded there (docs/judges.md).")
@click.option("--accepted", "accepted_file", type=click.Path(path_type=Path, dir_okay=False),
              help="With --baseline: an accepted file (docs/accepted.md).")
@user_errors
def report(results: Path, baseline: Path | None, fmt: str, output: Path | None, history_file: Path | None,
           accepted_file: Path | None) -> None:
    """Render the human report (markdown for PR comments, standalone HTML).

    Exits like `compare` with --baseline (1 when the gate fails), and 2 for a broken run,
    after printing its report."""
    from rag_ci.core.comparison.policy import recorded_gate

    if output is not None:
        check_output_path(output)
    head = load_results(results)
    history = _read_history(history_file)
    comparison = None
    # A broken run is never compared, but its report is what shows what went wrong.
    if baseline and not head.meta.broken:
        base = load_results(baseline, what="baseline")
        gate = recorded_gate(base.meta)
        comparison = compare(base, head, fail_on=gate.fail_on, gate=gate)
        comparison = _with_accepted(comparison, head, accepted_file, required=True)
    text = _render(head, comparison, fmt, history, output, _calibration(head, history_file))
    if output is not None:
        write_text_atomic(output, text)
        click.echo(f"report written to {output}", err=True)
    else:
        click.echo(text)
    if head.meta.broken:
        sys.exit(2)
    if comparison is not None and comparison.verdict == "fail":
        sys.exit(1)


def _calibration(head: RunResult, history_file: Path | None) -> list | None:
    """The judge's calibration statuses from an eval_history.jsonl (None without one)."""
    if history_file is None:
        return None
    from datetime import datetime, timezone

    from rag_ci.core.review.calibration_status import statuses_from_history

    return statuses_from_history(head, history_file.read_text(encoding="utf-8"), datetime.now(timezone.utc).date())
