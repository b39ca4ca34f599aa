"""`target.request`/`target.response`/`target.retrieve`: an app's own HTTP API mapped onto the
target contract by config (docs/targets.md; the mapping itself: rag_ci/core/base/api_mapping.py).

Pure models; rag_ci/core/config/targets.py imports these models for the http and docker targets.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rag_ci.core.base.api_mapping import check_template, compile_expression


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _expression(value: str | None) -> str | None:
    if value is not None:
        compile_expression(value)  # ValueError: reported with the file and line
    return value


def _template(value: Any) -> Any:
    if value is not None:
        check_template(value)
    return value


class ContextMapping(_Strict):
    """JMESPath expressions read on each item of `contexts` (defaults: the contract's names)."""

    text: str = Field("text", description="JMESPath, on one context item, to the chunk's text.")
    doc_id: str = Field(
        "doc_id",
        description="JMESPath, on one context item, to the corpus the chunk was indexed from: "
        "the chunk's own metadata, never echoed from the request (that would hide every routing leak).",
    )
    source: str = Field(
        "source", description="JMESPath, on one context item, to the chunk's document id (for hit@k, MRR)."
    )
    score: str = Field(
        "score", description="JMESPath, on one context item, to the retriever's score (reported only)."
    )

    @field_validator("*")
    @classmethod
    def _compiles(cls, value: str) -> str | None:
        return _expression(value)


class ResponseMapping(_Strict):
    """`target.response`: where the app's reply keeps the answer and the contexts (JMESPath)."""

    answer: str = Field(description="JMESPath to the answer's text in the app's reply.")
    contexts: str | None = Field(
        None,
        description="JMESPath to the list of retrieved chunks in the reply; each item "
        "is read with `context`. Absent: the answer call returns no contexts (see `retrieve`).",
    )
    context: ContextMapping = Field(
        default_factory=ContextMapping, description="How each item of `contexts` is read."
    )
    usage: str | None = Field(
        None,
        description="JMESPath building an object in the contract's usage shape, "
        "e.g. `{model: meta.model, input_tokens: meta.tokens_in}`.",
    )

    @field_validator("answer", "contexts", "usage")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _expression(value)


class RetrieveResponseMapping(_Strict):
    """`target.retrieve.response`: where the search call's reply keeps the chunks (JMESPath)."""

    contexts: str = Field(
        description="JMESPath to the list of retrieved chunks in the search call's reply; each item "
        "is read with `context`."
    )
    context: ContextMapping = Field(
        default_factory=ContextMapping, description="How each item of `contexts` is read."
    )

    @field_validator("contexts")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return _expression(value) or value


class RetrieveCall(_Strict):
    """`target.retrieve`: a second call per question for an API that answers and searches at two
    endpoints. Sent with the same question and routed corpora as the answer call, under the same
    timeout, concurrency, breaker and redaction; its contexts are joined after the answer call's."""

    url: str = Field(
        description="The search endpoint: a full URL, or a path on the answer URL's host "
        "(for `kind: docker`, on the container), e.g. `/v1/search`."
    )
    method: Literal["POST", "GET"] = Field(
        "POST",
        description="POST sends the rendered `request` as a JSON body; "
        "GET sends it as query parameters (so it must be a flat mapping).",
    )
    request: Any = Field(
        None,
        description='The search body (or query parameters) as a template: "{id}", "{question}", '
        '"{corpora}" and `each_corpus` as in `target.request`. Absent: rag-ci\'s own request shape.',
    )
    response: RetrieveResponseMapping = Field(
        description="Where the search reply keeps the chunks (JMESPath)."
    )
    order: Literal["together", "after"] = Field(
        "together",
        description="`together`: the search call goes out with the answer call; `after`: once the answer "
        "has come, for an app that cannot take both at once (the latency is then the answer call's).",
    )

    @field_validator("request")
    @classmethod
    def _checked(cls, value: Any) -> Any:
        return _template(value)

    @model_validator(mode="after")
    def _get_is_flat(self) -> RetrieveCall:
        nested = isinstance(self.request, dict) and any(isinstance(v, dict) for v in self.request.values())
        if (
            self.method == "GET"
            and self.request is not None
            and (not isinstance(self.request, dict) or nested)
        ):
            raise ValueError(
                "method GET sends `request` as query parameters: a flat mapping (name: template), "
                "nothing nested; use POST for a JSON body"
            )
        return self


class ApiMapped(_Strict):
    """`request`/`response`/`retrieve` for the targets spoken to over HTTP (docs/targets.md)."""

    request: Any = Field(
        None,
        description='The app\'s request body as a template: "{id}", "{question}", "{corpora}", '
        '"{messages}", "{conversation_id}" are filled in (a string that is exactly "{corpora}" becomes '
        'the list of routed corpora, exactly "{messages}" the chat messages: docs/conversations.md).',
    )
    response: ResponseMapping | None = Field(
        None,
        description="JMESPath expressions reading the app's reply into the "
        "contract's answer, contexts and usage.",
    )
    retrieve: RetrieveCall | None = Field(
        None,
        description="An optional second call per question to a search "
        "endpoint, whose contexts are joined with the answer call's (scoring, routing leaks).",
    )

    @field_validator("request")
    @classmethod
    def _template(cls, value: Any) -> Any:
        return _template(value)
