"""`report:` — how the reports link out (docs/traces.md)."""

from __future__ import annotations

from pydantic import Field, field_validator

from rag_ci.core.config.base import StrictModel


class ReportConfig(StrictModel):
    trace_url: str | None = Field(
        None,
        description="A link to each question's trace in your tracing tool, with `{trace_id}` where the id goes "
        '(e.g. "https://jaeger.example.com/trace/{trace_id}"): every row of the comment, the summary and the HTML report links to it.',
    )

    @field_validator("trace_url")
    @classmethod
    def _has_trace_id(cls, url: str | None) -> str | None:
        if url is not None:
            if "{trace_id}" not in url:
                raise ValueError('trace_url must contain "{trace_id}", where the question\'s trace id goes')
            if not url.startswith(("https://", "http://")):
                raise ValueError("trace_url must be an http(s) URL")
        return url
