"""The self-contained HTML labelling page of an audit sample (rag_ci/templates/audit.html.j2).

One file that works offline (from disk or an artifact download): the sample is embedded
as JSON in a script element, the page builds the form with textContent only (no markup
from the data), and a button saves labels.yml, which `rag-ci calibrate` reads.
"""

from __future__ import annotations

from rag_ci.core.reporting.render import _environment
from rag_ci.core.results import RunResult
from rag_ci.core.review.audit import LABEL_FIELDS, AuditSample, sheet_entries, sheet_header

_BUTTONS = {"correct": ("correct", "incorrect"), "complete": ("complete", "incomplete")}


def render_audit_page(run: RunResult, sample: AuditSample) -> str:
    columns = [[LABEL_FIELDS[m], *_BUTTONS[LABEL_FIELDS[m]]] for m in sample.metrics]
    data = {"header": sheet_header(run, sample), "columns": columns, "entries": sheet_entries(run, sample)}
    return _environment(True).get_template("audit.html.j2").render(data=data, count=len(sample.items))
