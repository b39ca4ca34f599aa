"""`rag-ci calibrate LABELS RESULTS`: how far to trust the judge, measured against human labels."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from rag_ci.core.calibration import calibrate as compare_labels, parse_labels, render_calibration
from rag_ci.errors import RagCiError


class _UserError(click.ClickException):
    exit_code = 2  # as in rag_ci.cli: 1 is reserved for a failed gate


@click.command("calibrate")
@click.argument("labels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--metric", default="correctness", show_default=True,
              help="The judge metric whose pass/fail verdicts are compared with the labels.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--min-kappa", type=float, default=None,
              help="Exit with status 1 when Cohen's kappa is below this (e.g. 0.6), or undefined.")
def calibrate(labels: Path, results: Path, metric: str, as_json: bool, min_kappa: float | None) -> None:
    """Compare human labels (YAML or CSV: id → correct true/false) with the judge's verdicts
    in a results.json: agreement, Cohen's kappa, and every disagreement with the judge's reason."""
    from rag_ci.storage import load_results

    try:
        human = parse_labels(labels.read_text(encoding="utf-8"), str(labels))
        report = compare_labels(human, load_results(results, what="results"), metric=metric)
    except RagCiError as exc:
        raise _UserError(str(exc)) from None
    if as_json:
        payload = asdict(report) | {"n": report.n, "agreement": report.agreement}
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(render_calibration(report))
    if min_kappa is not None and (report.kappa is None or report.kappa < min_kappa):
        kappa = "undefined" if report.kappa is None else f"{report.kappa:.3f}"
        click.echo(f"Cohen's kappa {kappa} is below --min-kappa {min_kappa}", err=True)
        raise SystemExit(1)
