"""The blind audit sample on disk: the labelling sheet and page a human fills in (docs/judges.md).

Used by `rag-ci audit sample` and by the action's full run, which leaves one in its report.
"""

from __future__ import annotations

from pathlib import Path

LABELS_FILE = "labels.yml"
PAGE_FILE = "audit.html"


def decided_by(baseline, head) -> dict[str, str]:
    """Question id -> what this run decided about it against the baseline (regression,
    worse, gain, unstable): the answers a wrong judge would cost the most on."""
    from rag_ci.core.comparison.compare import compare

    comparison = compare(baseline, head)
    decided: dict[str, str] = {}
    for why, changes in (
        ("gain", comparison.gains),
        ("worse", comparison.worse),
        ("regression", comparison.regressions),
    ):
        decided.update({c.id: why for c in changes})
    decided.update({qid: "unstable" for qid in comparison.unstable if qid not in decided})
    return decided


def write_audit_sample(head, out: Path, fraction: float, seed: int, baseline=None, sheet: str = "yml"):
    """Draw the sample and write the sheet (labels.yml or labels.csv) and audit.html into `out`."""
    from rag_ci.core.review.audit import draw_sample, labels_csv, labels_yaml
    from rag_ci.core.review.audit_page import render_audit_page
    from rag_ci.files.atomic import write_text_atomic

    sample = draw_sample(head, fraction, seed, decided_by(baseline, head) if baseline is not None else None)
    out.mkdir(parents=True, exist_ok=True)
    if sheet == "csv":
        write_text_atomic(out / "labels.csv", labels_csv(head, sample))
    else:
        write_text_atomic(out / LABELS_FILE, labels_yaml(head, sample))
    write_text_atomic(out / PAGE_FILE, render_audit_page(head, sample))
    return sample
