"""`rag-ci audit sample RESULTS`: the blind sample of answers a human labels (docs/judges.md)."""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.files.audit_sample import LABELS_FILE, PAGE_FILE, write_audit_sample


@click.group("audit")
def audit() -> None:
    """Audit the judge: a blind sample of answers for humans to label."""


@audit.command("sample")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--fraction",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.1,
    show_default=True,
    help="Share of each stratum (corpus × judge verdict) to sample; at least one answer per stratum.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default="audit",
    show_default=True,
    help=f"Folder for {LABELS_FILE} (the sheet) and {PAGE_FILE} (the labelling page).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Same results, fraction and seed: same sample."
)
@click.option(
    "--baseline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The baseline RESULTS was compared with: its regressions, gains and unstable verdicts are always included.",
)
@click.option(
    "--sheet",
    type=click.Choice(["yml", "csv"]),
    default="yml",
    show_default=True,
    help="The labelling sheet's format (the HTML page always saves labels.yml).",
)
@user_errors
def sample(results: Path, fraction: float, out: Path, seed: int, baseline: Path | None, sheet: str) -> None:
    """Write a labelling sheet and a self-contained HTML labelling page for a blind,
    stratified sample of RESULTS' answers (the judge's verdicts are not shown)."""
    from rag_ci.core.review.audit import describe_sample
    from rag_ci.files.results_file import load_results

    try:
        head = load_results(results, what="results")
        base = load_results(baseline, what="baseline") if baseline else None
        drawn = write_audit_sample(head, out, fraction, seed, base, sheet)
    except OSError as exc:
        raise UserError(str(exc)) from None
    echo(describe_sample(drawn))
    echo(f"wrote {out / ('labels.csv' if sheet == 'csv' else LABELS_FILE)} and {out / PAGE_FILE}")
