"""target.request templates and target.response JMESPath mappings (rag_ci/core/base/api_mapping.py)."""

from __future__ import annotations

import pytest

from rag_ci.core.base.api_mapping import check_template, map_reply, render_request
from rag_ci.errors import TargetError

REQUEST = {"id": "EVT-01", "question": "What is the delay?", "corpora": ["mss54", "mss60"]}


def test_whole_string_placeholders_become_the_values_and_embedded_ones_their_text():
    template = {
        "ref": "{id}",
        "messages": [{"role": "user", "content": "Q: {question}"}],
        "collections": "{corpora}",
        "filter": {"in": "{corpora}", "label": "corpora={corpora}"},
        "top_k": 5,
        "stream": False,
        "x": None,
    }
    assert render_request(template, REQUEST) == {
        "ref": "EVT-01",
        "messages": [{"role": "user", "content": "Q: What is the delay?"}],
        "collections": ["mss54", "mss60"],
        "filter": {"in": ["mss54", "mss60"], "label": "corpora=mss54,mss60"},
        "top_k": 5,
        "stream": False,
        "x": None,
    }
    assert render_request("{question}", REQUEST) == "What is the delay?"  # a bare string body


def test_a_template_naming_no_question_or_an_unknown_placeholder_is_refused():
    check_template({"q": "{question}", "n": 3})
    with pytest.raises(ValueError, match="never sends the question"):
        check_template({"ref": "{id}"})
    with pytest.raises(ValueError, match=r"unknown placeholder \{query\}"):
        check_template({"q": "{query}"})


RESPONSE = {
    "answer": "result.text",
    "contexts": "result.sources",
    "context": {
        "text": "content",
        "doc_id": "metadata.collection",
        "source": "metadata.file",
        "score": "relevance",
    },
}


def test_a_reply_is_read_into_the_contract_with_doc_id_from_the_chunk_metadata():
    raw = {
        "result": {
            "text": "10 ms",
            "sources": [
                {
                    "content": "The delay is 10 ms.",
                    "metadata": {"collection": "mss60", "file": "evt.md"},
                    "relevance": 0.8,
                },
                {"content": "Page 7.", "metadata": {"collection": 54, "file": "p.md"}},
            ],
        }
    }
    assert map_reply(RESPONSE, raw) == {
        "answer": "10 ms",
        "contexts": [
            {"text": "The delay is 10 ms.", "doc_id": "mss60", "source": "evt.md", "score": 0.8},
            # a number id is its text; no score: None
            {
                "text": "Page 7.",
                "doc_id": "54",
                "source": "p.md",
                "score": None,
            },
        ],
    }


def test_contexts_default_to_the_contracts_field_names_and_missing_ones_to_none():
    mapped = map_reply(
        {"answer": "a", "contexts": "hits"}, {"a": "x", "hits": [{"text": "t", "doc_id": "d"}]}
    )
    assert mapped["contexts"] == [{"text": "t", "doc_id": "d", "source": None, "score": None}]
    assert (
        map_reply({"answer": "a", "contexts": "hits"}, {"a": "x", "hits": []})["contexts"] == []
    )  # only [] is none


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            {"detail": "LLM down"},
            'target.response.answer `result.text` found nothing, not text, in the reply {"detail": "LLM down"}',
        ),
        ({"result": {"text": 3}}, "target.response.answer `result.text` found a int, not text"),
        (
            {"result": {"text": "ok", "sources": {"content": "x"}}},
            "target.response.contexts `result.sources` found a dict, not a list",
        ),
        (
            {"result": {"text": "ok", "sources": [{"body": "x"}]}},
            "target.response.context.text `content` found nothing, not text, in context 1",
        ),
    ],
)
def test_a_reply_the_mapping_does_not_fit_is_a_malformed_response_naming_the_expression(raw, message):
    with pytest.raises(TargetError) as caught:
        map_reply(RESPONSE, raw)
    assert str(caught.value).startswith("malformed response: ") and message in str(caught.value)


def test_usage_is_an_expression_building_the_contracts_object():
    response = {"answer": "text", "usage": "{model: meta.model, input_tokens: meta.tokens.in}"}
    mapped = map_reply(response, {"text": "a", "meta": {"model": "m-1", "tokens": {"in": 5}}})
    assert mapped["usage"] == {"model": "m-1", "input_tokens": 5}


@pytest.mark.parametrize(
    "mapping, raw, message",
    [
        (
            {"answer": "join(', ', result.sources)"},
            {"result": {"sources": [{"file": "a.md"}]}},
            "target.response.answer: join() needs strings, got an object at result.sources[0]",
        ),
        (
            {"answer": "result.text", "contexts": "sort_by(hits, &score)"},
            {"result": {"text": "ok"}, "hits": [{"score": "high"}, {"score": 2}]},
            "target.response.contexts: sort_by() needs",
        ),
        (
            {"answer": "result.text", "contexts": "hits", "context": {"text": "join(' ', parts)"}},
            {"result": {"text": "ok"}, "hits": [{"parts": ["a", 3]}]},
            "target.response.context.text: join() needs strings, got a number at parts[1] (context 1)",
        ),
    ],
)
def test_a_jmespath_type_error_is_a_target_error_naming_the_expression_and_the_values_type(
    mapping, raw, message
):
    """Before: `internal error: JMESPathTypeError`, which the breaker never counted."""
    with pytest.raises(TargetError) as caught:
        map_reply(mapping, raw)
    assert message in str(caught.value), str(caught.value)


def test_a_reply_nested_200000_deep_or_too_large_is_refused_before_parsing():
    from rag_ci.targets.reply_json import MAX_REPLY_BYTES, load_reply

    with pytest.raises(TargetError, match="nested deeper than 100 levels"):
        load_reply(b'{"answer": "x", "extra": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    with pytest.raises(TargetError, match="more than rag-ci reads"):
        load_reply(b'{"answer": "' + b"x" * MAX_REPLY_BYTES + b'"}')
    assert load_reply('{"answer": "[[[[ \\" {{{", "c": [[[1]]]}') == {"answer": '[[[[ " {{{', "c": [[[1]]]}


def test_a_placeholder_as_a_key_is_its_text_so_a_template_that_validates_renders_every_question():
    import json

    from rag_ci.core.base.api_mapping import check_template, render_request

    template = {"{corpora}": {"q": "{question}"}, "{id}": True}
    check_template(template)

    body = render_request(template, {"id": "Q1", "question": "why?", "corpora": ["du2", "du3"]})

    assert body == {"du2,du3": {"q": "why?"}, "Q1": True}
    json.dumps(body)  # what the http target sends
