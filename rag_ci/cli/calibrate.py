"""`rag-ci calibrate LABELS RESULTS`: how far to trust the judge, measured against human labels."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import click

from rag_ci.cli.echo import echo, echo_json
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.core.review.calibration import CalibrationReport, parse_label_sheet, render_calibration
from rag_ci.core.review.calibration import calibrate as compare_labels


def _payload(report: CalibrationReport) -> dict:
    return asdict(report) | {"n": report.n, "agreement": report.agreement}


@click.command("calibrate")
@click.argument("labels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="A judge metric to compare (repeatable); default: every metric the labels cover "
    "(`correct` labels correctness, `complete` labels completeness).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the figures as JSON (a list when several metrics are compared).",
)
@click.option(
    "--min-kappa",
    type=float,
    default=None,
    help="Exit with status 1 when Cohen's kappa is below this (e.g. 0.6), or undefined.",
)
@click.option(
    "--record",
    is_flag=True,
    help="Append a calibration record per metric to --history (the PR comment reports it).",
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The eval_history.jsonl to record into (a checkout of the data branch).",
)
@user_errors
def calibrate(
    labels: Path,
    results: Path,
    metrics: tuple[str, ...],
    as_json: bool,
    min_kappa: float | None,
    record: bool,
    history_file: Path | None,
) -> None:
    """Compare human labels (the sheet of `rag-ci audit sample`, or YAML/CSV: id → correct
    true/false) with the judge's verdicts in a results.json: agreement, Cohen's kappa, and
    every disagreement with the judge's reason."""
    from rag_ci.files.results_file import load_results

    if record and history_file is None:
        raise UserError("--record needs --history FILE (the eval_history.jsonl of the data branch)")
    try:
        text = labels.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{labels}: cannot read the labels file: {exc}") from None
    sheet = parse_label_sheet(text, str(labels))
    run = load_results(results, what="results")
    names = metrics or tuple(sheet.labels) or ("correctness",)
    reports = [compare_labels(sheet.labels.get(name, {}), run, metric=name) for name in names]
    if sheet.judge_digest and run.meta.judge and sheet.judge_digest != run.meta.judge.digest():
        echo(f"warning: {labels} was sampled from a run of another judge than {results}'s", err=True)
    if as_json:
        payloads = [_payload(r) for r in reports]
        echo_json(json.dumps(payloads[0] if len(payloads) == 1 else payloads, indent=2))
    else:
        echo("\n\n".join(render_calibration(r) for r in reports))
    if record and history_file is not None:  # --record without --history is refused above
        _record(reports, run, sheet.labeller_count, history_file)
    low = [r for r in reports if min_kappa is not None and (r.kappa is None or r.kappa < min_kappa)]
    for r in low:
        kappa = "undefined" if r.kappa is None else f"{r.kappa:.3f}"
        echo(f"{r.metric}: Cohen's kappa {kappa} is below --min-kappa {min_kappa}", err=True)
    if low:
        raise SystemExit(1)


def _record(reports: list[CalibrationReport], run, labellers: int, history_file: Path) -> None:
    from rag_ci.core.comparison.history import calibration_line, dump_line

    judge = run.meta.judge
    if judge is None:
        raise UserError("--record: the results have no judge (a judge-free run has nothing to calibrate)")
    today = datetime.now(UTC).date().isoformat()
    lines = [
        dump_line(
            calibration_line(
                judge_digest=judge.digest(),
                judge=f"{judge.provider}:{judge.model}",
                metric=r.metric,
                n=r.n,
                agreement=r.agreement,
                kappa=r.kappa,
                date=today,
                labellers=labellers,
            )
        )
        for r in reports
        if r.n > 0
    ]
    if not lines:
        raise UserError("--record: no labelled answer has a judge verdict to compare with; nothing recorded")
    try:
        existing = history_file.read_bytes() if history_file.exists() else b""
        with history_file.open("a", encoding="utf-8") as out:
            if existing and not existing.endswith(b"\n"):
                out.write("\n")
            out.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise UserError(f"cannot write {history_file}: {exc}") from None
    echo(f"recorded {len(lines)} calibration record(s) in {history_file}", err=True)
