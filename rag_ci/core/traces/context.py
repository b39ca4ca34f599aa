"""W3C trace context (https://www.w3.org/TR/trace-context/): the `traceparent` rag-ci sends with
every request, so the RAG's spans for a question join that question's trace."""

from __future__ import annotations

import re

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")


def traceparent(trace_id: str, span_id: str) -> str:
    """`00-<trace id>-<span id>-01` (version 0, sampled: the RAG records and exports the trace)."""
    if not re.fullmatch(r"[0-9a-f]{32}", trace_id) or not re.fullmatch(r"[0-9a-f]{16}", span_id):
        raise ValueError(f"not a W3C trace id and span id: {trace_id!r}, {span_id!r}")
    return f"00-{trace_id}-{span_id}-01"


def parse_traceparent(value: object) -> tuple[str, str] | None:
    """(trace id, parent span id) of a `traceparent`, or None when it is not one."""
    match = _TRACEPARENT.match(value) if isinstance(value, str) else None
    return (match.group(1), match.group(2)) if match else None


def trace_link(template: str, trace_id: str) -> str:
    """`report.trace_url` with the question's trace id in place of `{trace_id}`."""
    return template.replace("{trace_id}", trace_id)
