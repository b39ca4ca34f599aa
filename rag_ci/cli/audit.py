"""`rag-ci audit sample RESULTS`: the blind sample of answers a human labels (docs/judges.md)."""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.errors import RagCiError

LABELS_FILE = "labels.yml"
PAGE_FILE = "audit.html"


class _UserError(click.ClickException):
    exit_code = 2  # as in rag_ci.cli: 1 is reserved for a failed gate


def decided_by(baseline, head) -> dict[str, str]:
    """Question id -> what this run decided about it against the baseline (regression,
    worse, gain, unstable): the answers a wrong judge would cost the most on."""
    from rag_ci.core.compare import compare

    comparison = compare(baseline, head)
    decided: dict[str, str] = {}
    for why, changes in (("gain", comparison.gains), ("worse", comparison.worse), ("regression", comparison.regressions)):
        decided.update({c.id: why for c in changes})
    decided.update({qid: "unstable" for qid in comparison.unstable if qid not in decided})
    return decided


def write_audit_sample(head, out: Path, fraction: float, seed: int, baseline=None, sheet: str = "yml"):
    """Draw the sample and write the sheet (labels.yml or labels.csv) and audit.html into `out`."""
    from rag_ci.core.audit import draw_sample, labels_csv, labels_yaml
    from rag_ci.core.audit_page import render_audit_page
    from rag_ci.storage import write_text_atomic

    sample = draw_sample(head, fraction, seed, decided_by(baseline, head) if baseline is not None else None)
    out.mkdir(parents=True, exist_ok=True)
    if sheet == "csv":
        write_text_atomic(out / "labels.csv", labels_csv(head, sample))
    else:
        write_text_atomic(out / LABELS_FILE, labels_yaml(head, sample))
    write_text_atomic(out / PAGE_FILE, render_audit_page(head, sample))
    return sample


@click.group("audit")
def audit() -> None:
    """Audit the judge: a blind sample of answers for humans to label."""


@audit.command("sample")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--fraction", type=click.FloatRange(0, 1, min_open=True), default=0.1, show_default=True,
              help="Share of each stratum (corpus × judge verdict) to sample; at least one answer per stratum.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default="audit", show_default=True,
              help=f"Folder for {LABELS_FILE} (the sheet) and {PAGE_FILE} (the labelling page).")
@click.option("--seed", type=int, default=0, show_default=True, help="Same results, fraction and seed: same sample.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The baseline RESULTS was compared with: its regressions, gains and unstable verdicts are always included.")
@click.option("--sheet", type=click.Choice(["yml", "csv"]), default="yml", show_default=True,
              help="The labelling sheet's format (the HTML page always saves labels.yml).")
def sample(results: Path, fraction: float, out: Path, seed: int, baseline: Path | None, sheet: str) -> None:
    """Write a labelling sheet and a self-contained HTML labelling page for a blind,
    stratified sample of RESULTS' answers (the judge's verdicts are not shown)."""
    from rag_ci.core.audit import describe_sample
    from rag_ci.storage import load_results

    try:
        head = load_results(results, what="results")
        base = load_results(baseline, what="baseline") if baseline else None
        drawn = write_audit_sample(head, out, fraction, seed, base, sheet)
    except (RagCiError, OSError) as exc:
        raise _UserError(str(exc)) from None
    click.echo(describe_sample(drawn))
    click.echo(f"wrote {out / ('labels.csv' if sheet == 'csv' else LABELS_FILE)} and {out / PAGE_FILE}")
