"""A question's spans read into contexts, model, tokens and stage times (rag_ci.core.traces.spans):
OpenInference's and OpenLLMetry's conventions, and spans as untrusted input."""

from __future__ import annotations

import json

from rag_ci.core.traces.context import parse_traceparent, trace_link, traceparent
from rag_ci.core.traces.spans import MAX_DOCUMENTS, MAX_TEXT, Span, SpanEvent, read_trace

MS = 1_000_000


def span(name: str, start_ms: int, end_ms: int, parent: str = "", events=(), **attributes) -> Span:
    return Span(
        trace_id="ab" * 16,
        span_id=f"{start_ms:016x}",
        parent_span_id=parent,
        name=name,
        start_ns=start_ms * MS,
        end_ns=end_ms * MS,
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
        events=tuple(events),
    )


def openinference_retriever(start: int, end: int, documents: list[dict]) -> Span:
    attributes = {"openinference.span.kind": "RETRIEVER"}
    for i, document in enumerate(documents):
        for key, value in document.items():
            attributes[f"retrieval.documents.{i}.document.{key}"] = value
    return Span("ab" * 16, f"{start:016x}", "", "retrieve", start * MS, end * MS, attributes)


def test_openinference_retriever_documents_become_contexts_with_their_corpus_from_the_metadata():
    reading = read_trace(
        [
            span(
                "llm",
                30,
                90,
                openinference__span__kind="LLM",
                llm__model_name="mistral-small-2409",
                llm__token_count__prompt=120,
                llm__token_count__completion=15,
            ),
            openinference_retriever(
                10,
                25,
                [
                    {
                        "content": "The delay is 10 ms.",
                        "id": "x#0",
                        "score": 0.9,
                        "metadata": json.dumps({"corpus": "a"}),
                    },
                    {"content": "Other text.", "metadata": json.dumps({"corpus": "b", "source": "b/y.md"})},
                ],
            ),
            span("chain", 0, 100, openinference__span__kind="CHAIN"),
        ]
    )
    contexts = reading.contexts("corpus")
    assert [(c.text, c.doc_id, c.source, c.score) for c in contexts] == [
        ("The delay is 10 ms.", "a", "x#0", 0.9),
        ("Other text.", "b", "b/y.md", None),
    ]
    assert (reading.model, reading.input_tokens, reading.output_tokens) == ("mistral-small-2409", 120, 15)
    assert reading.stages == {"retrieval": 0.015, "generation": 0.06}
    assert reading.retrievers == 1


def test_a_document_without_the_corpus_key_has_no_doc_id_so_it_counts_as_a_leak():
    reading = read_trace([openinference_retriever(0, 1, [{"content": "t", "metadata": "{not json"}])])
    assert [c.doc_id for c in reading.contexts("corpus")] == [None]


def test_a_rerankers_output_is_what_the_llm_read_not_the_retrievers_candidates():
    reranker = span(
        "rerank",
        5,
        6,
        openinference__span__kind="RERANKER",
        **{
            "reranker.output_documents.0.document.content": "kept",
            "reranker.input_documents.0.document.content": "x",
        },
    )
    reading = read_trace(
        [openinference_retriever(0, 4, [{"content": "candidate 1"}, {"content": "candidate 2"}]), reranker]
    )
    assert [c.text for c in reading.contexts("corpus")] == ["kept"]


def test_openllmetry_vector_db_result_events_and_gen_ai_usage():
    results = [
        SpanEvent(
            "db.query.result",
            {
                "db.query.result.document": f"chunk {i}",
                "db.query.result.id": f"id{i}",
                "db.query.result.distance": 0.1 * i,
                "db.query.result.metadata": json.dumps({"corpus": "a"}),
            },
        )
        for i in range(2)
    ]
    reading = read_trace(
        [
            span("chroma.query", 0, 10, events=results, db__system="chroma"),
            span(
                "openai.chat",
                10,
                50,
                gen_ai__operation__name="chat",
                gen_ai__request__model="gpt-4o",
                gen_ai__response__model="gpt-4o-2024-08-06",
                gen_ai__usage__input_tokens=50,
                gen_ai__usage__output_tokens=7,
            ),
        ]
    )
    assert [(c.text, c.doc_id, c.source) for c in reading.contexts("corpus")] == [
        ("chunk 0", "a", "id0"),
        ("chunk 1", "a", "id1"),
    ]
    assert (reading.model, reading.input_tokens, reading.output_tokens) == ("gpt-4o-2024-08-06", 50, 7)
    assert set(reading.stages) == {"retrieval", "generation"}


def test_a_traceloop_retriever_tasks_output_documents():
    output = json.dumps(
        {
            "outputs": [
                {"lc": 1, "kwargs": {"page_content": "The delay is 20 ms.", "metadata": {"corpus": "b"}}}
            ]
        }
    )
    reading = read_trace(
        [
            span(
                "VectorStoreRetriever.task",
                0,
                5,
                traceloop__span__kind="task",
                traceloop__entity__name="VectorStoreRetriever",
                traceloop__entity__output=output,
            )
        ]
    )
    assert [(c.text, c.doc_id) for c in reading.contexts("corpus")] == [("The delay is 20 ms.", "b")]


def test_a_trace_with_no_retriever_says_so_and_keeps_no_contexts():
    reading = read_trace([span("handler", 0, 10), span("llm", 1, 9, openinference__span__kind="LLM")])
    assert reading.retrievers == 0 and reading.documents == ()
    assert reading.stages == {"generation": 0.008}


def test_untrusted_spans_are_bounded():
    huge = [{"content": "x" * (MAX_TEXT + 500), "score": float("nan")} for _ in range(3)]
    many = [{"content": f"d{i}"} for i in range(MAX_DOCUMENTS + 50)]
    reading = read_trace([openinference_retriever(0, 1, huge), openinference_retriever(2, 3, many)])
    assert len(reading.documents) == MAX_DOCUMENTS
    assert len(reading.documents[0].content) == MAX_TEXT and reading.documents[0].score is None
    # token counts that are not counts are not summed
    odd = read_trace([span("llm", 0, 1, openinference__span__kind="LLM", llm__token_count__prompt=-3)])
    assert odd.input_tokens is None


def test_traceparent_round_trips_and_links():
    value = traceparent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    assert value == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    assert parse_traceparent(value) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    assert parse_traceparent("00-xyz") is None and parse_traceparent(None) is None
    assert trace_link("https://t.example/trace/{trace_id}", "ab") == "https://t.example/trace/ab"


def test_the_generators_cost_is_openinferences_llm_cost_total_summed():
    reading = read_trace(
        [
            span("llm", 0, 1, openinference__span__kind="LLM", llm__cost__total=0.0021),
            span("llm", 2, 3, openinference__span__kind="LLM", llm__cost__total=0.0004),
        ]
    )
    assert reading.cost_usd == 0.0025
    assert read_trace([span("llm", 0, 1, openinference__span__kind="LLM")]).cost_usd is None
