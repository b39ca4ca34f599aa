"""The self-contained HTML page on which a human reviews drafts (rag_ci/templates/drafts.html.j2).

Like the audit labelling page (rag_ci.core.review.audit_page): one file that works
offline, the drafts embedded as JSON in a script element, the form built with
textContent only (no markup from the data: passages and drafts are untrusted text), and a
button that saves reviewed.yml, which `rag-ci questions apply` merges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rag_ci.core.reporting.render import _environment

REVIEWED_FILE = "reviewed.yml"
PAGE_FILE = "review.html"


def render_draft_page(
    entries: list[dict[str, Any]],
    questions_file: str,
    corpora: Sequence[str] = (),
    documents: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """`corpora`: the routing table's names (doc_id's choices); `documents`: corpus -> the
    names its documents are cited by (sources' choices, rag_ci.core.review.draft_review.document_choices)."""
    data = {
        "questions_file": questions_file,
        "entries": entries,
        "file": REVIEWED_FILE,
        "corpora": list(corpora),
        "documents": {corpus: list(names) for corpus, names in (documents or {}).items()},
    }
    return _environment(True).get_template("drafts.html.j2").render(data=data, count=len(entries))
