"""One question's spans read into what rag-ci scores: the documents the retriever handed the LLM
(the question's contexts), the generator's model and tokens, and the time of each stage.

Pure: the receiver (rag_ci.targets.traces) decodes the OTLP wire format into `Span`s; this module
knows only the semantic conventions (docs/traces.md has the table):

- OpenInference (Arize; LlamaIndex, LangChain, Haystack, DSPy...): `openinference.span.kind`
  RETRIEVER spans with `retrieval.documents.N.document.{content,id,score,metadata}`, RERANKER spans
  with `reranker.output_documents.N.document.*` (what the LLM then read), LLM spans with
  `llm.model_name`, `llm.token_count.{prompt,completion}` and `llm.cost.total` (USD).
- OpenLLMetry (Traceloop) and the GenAI conventions: `gen_ai.request.model`/`gen_ai.response.model`,
  `gen_ai.usage.{input,output,prompt,completion}_tokens` (and `llm.usage.*`); retrieval from the
  vector-DB spans' `db.query.result` events (`db.query.result.{document,id,distance,metadata}`)
  and from `traceloop.entity.output` of a retriever task (LangChain documents as JSON).

Spans are untrusted input like a reply: every text is cut (`MAX_TEXT`), the documents counted
(`MAX_DOCUMENTS`); the caller redacts before anything is kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_ci.core.results import Context

MAX_TEXT = 20_000  # characters of one document kept
MAX_DOCUMENTS = 100  # documents of one question kept

_OI_KIND = "openinference.span.kind"
_OI_DOCUMENT = re.compile(r"^(retrieval\.documents|reranker\.output_documents)\.(\d+)\.document\.(\w+)$")
_MODEL_KEYS = ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model")
_INPUT_KEYS = (
    "llm.token_count.prompt",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.usage.prompt_tokens",
)
_OUTPUT_KEYS = (
    "llm.token_count.completion",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.usage.completion_tokens",
)


@dataclass(frozen=True)
class SpanEvent:
    name: str
    attributes: Mapping[str, Any]


@dataclass(frozen=True)
class Span:
    """One span as the receiver decoded it (ids in lowercase hex, times in ns since the epoch)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...] = ()

    @property
    def seconds(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9


@dataclass(frozen=True)
class Document:
    content: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceReading:
    """What one question's trace says. `retrievers`: the retrieval spans seen (0: the RAG emits
    none rag-ci knows, and its contexts cannot come from the trace)."""

    documents: tuple[Document, ...]
    retrievers: int
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None  # the generator's cost in USD, when the instrumentation prices it
    # seconds per stage: "retrieval" (first retrieval start to last retrieval end) and
    # "generation" (the LLM spans, likewise); absent when the trace has no such span
    stages: Mapping[str, float]

    def contexts(self, corpus_key: str) -> list[Context]:
        """The documents as contexts: `doc_id` the corpus named by the metadata's `corpus_key`
        (none: a leak, as the contract says), `source` the document's id."""
        return [
            Context(
                text=d.content,
                doc_id=_text(d.metadata.get(corpus_key)),
                source=d.id or _text(d.metadata.get("source")),
                score=d.score,
            )
            for d in self.documents
        ]


def read_trace(spans: Sequence[Span]) -> TraceReading:
    """The question's reading of its spans (any order)."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.end_ns))
    retrieved: list[tuple[Span, list[Document]]] = []
    reranked: list[Document] | None = None
    generators: list[Span] = []
    for span in ordered:
        kind = str(span.attributes.get(_OI_KIND, "")).upper()
        if kind == "RERANKER":
            reranked = _openinference_documents(span.attributes, "reranker.output_documents")
        elif kind == "RETRIEVER":
            retrieved.append((span, _openinference_documents(span.attributes, "retrieval.documents")))
        elif _is_generator(span, kind):
            generators.append(span)
        else:
            documents = _openllmetry_documents(span)
            if documents is not None:
                retrieved.append((span, documents))
    documents = reranked if reranked is not None else [d for _, found in retrieved for d in found]
    return TraceReading(
        documents=tuple(documents[:MAX_DOCUMENTS]),
        retrievers=len(retrieved),
        model=_first(generators, _MODEL_KEYS, str),
        input_tokens=_sum(generators, _INPUT_KEYS),
        output_tokens=_sum(generators, _OUTPUT_KEYS),
        cost_usd=_cost(generators),
        stages={
            name: _extent(group)
            for name, group in (("retrieval", [s for s, _ in retrieved]), ("generation", generators))
            if group
        },
    )


def _is_generator(span: Span, kind: str) -> bool:
    if kind == "LLM":
        return True
    if kind:  # another OpenInference kind (CHAIN, EMBEDDING...): not the generator
        return False
    operation = str(span.attributes.get("gen_ai.operation.name", ""))
    return operation in {"chat", "text_completion", "generate_content"} or (
        not operation and "gen_ai.request.model" in span.attributes
    )


def _openinference_documents(attributes: Mapping[str, Any], prefix: str) -> list[Document]:
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _OI_DOCUMENT.match(key)
        if match and match.group(1) == prefix and int(match.group(2)) < MAX_DOCUMENTS:
            fields.setdefault(int(match.group(2)), {})[match.group(3)] = value
    return [_document(fields[i]) for i in sorted(fields) if "content" in fields[i]]


def _openllmetry_documents(span: Span) -> list[Document] | None:
    """A vector DB's query results (its `db.query.result` events), or a retriever task's output
    (LangChain documents); None: not a retrieval span."""
    results = [e.attributes for e in span.events if e.name == "db.query.result"]
    if results:
        return [
            _document(
                {
                    "content": r.get("db.query.result.document"),
                    "id": r.get("db.query.result.id"),
                    "score": r.get("db.query.result.distance"),
                    "metadata": r.get("db.query.result.metadata"),
                }
            )
            for r in results[:MAX_DOCUMENTS]
            if r.get("db.query.result.document") is not None
        ]
    name = str(span.attributes.get("traceloop.entity.name", span.name)).lower()
    if "retriev" not in name or "traceloop.entity.output" not in span.attributes:
        return None
    output = _json(span.attributes["traceloop.entity.output"])
    if isinstance(output, dict):  # the callback's {"outputs": [...]} or {"documents": [...]}
        output = output.get("outputs", output.get("documents", output.get("output")))
    if not isinstance(output, list):
        return None
    found = []
    for item in output[:MAX_DOCUMENTS]:
        item = item.get("kwargs", item) if isinstance(item, dict) else item  # a serialised Document
        if isinstance(item, dict) and isinstance(item.get("page_content"), str):
            found.append(
                _document(
                    {"content": item["page_content"], "id": item.get("id"), "metadata": item.get("metadata")}
                )
            )
    return found


def _document(fields: Mapping[str, Any]) -> Document:
    metadata = fields.get("metadata")
    if isinstance(metadata, str):
        metadata = _json(metadata)
    score = fields.get("score")
    return Document(
        content=str(fields.get("content", ""))[:MAX_TEXT],
        id=_text(fields.get("id")),
        score=float(score)
        if isinstance(score, (int, float)) and score == score and abs(score) != float("inf")
        else None,
        metadata=metadata if isinstance(metadata, dict) else {},
    )


def _json(text: Any) -> Any:
    if not isinstance(text, str) or len(text) > MAX_DOCUMENTS * MAX_TEXT:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return None if value is None or isinstance(value, (dict, list)) else str(value)[:500]


def _first(spans: Sequence[Span], keys: Sequence[str], kind: type[str]) -> str | None:
    for span in spans:
        for key in keys:
            value = span.attributes.get(key)
            if isinstance(value, kind) and value:
                return value[:200]
    return None


def _sum(spans: Sequence[Span], keys: Sequence[str]) -> int | None:
    counts = [next((v for k in keys if _count(v := s.attributes.get(k))), None) for s in spans]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _cost(spans: Sequence[Span]) -> float | None:
    """OpenInference's `llm.cost.total` (USD), summed over the generator spans that have it."""
    costs = [
        float(v)
        for s in spans
        if isinstance(v := s.attributes.get("llm.cost.total"), (int, float))
        and not isinstance(v, bool)
        and 0 <= v < float("inf")
    ]
    return round(sum(costs), 8) if costs else None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _extent(spans: Sequence[Span]) -> float:
    return round(max(0, max(s.end_ns for s in spans) - min(s.start_ns for s in spans)) / 1e9, 6)
