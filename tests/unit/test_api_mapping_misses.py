"""A mapping path that finds nothing is the question's error, naming the path and what the
reply holds instead, for `target.response` and `target.retrieve.response` alike.

Before, a search reply whose `hits` was renamed or null gave empty contexts: plain misses,
no word of the mapping. Now only a path that holds an empty list means "no contexts".
"""

from __future__ import annotations

import pytest

from rag_ci.core.base.api_mapping import map_contexts, map_reply
from rag_ci.core.base.value_words import described, where_the_path_ends
from rag_ci.errors import TargetError

SEARCH = {"contexts": "data.hits", "context": {"text": "chunk"}}


@pytest.mark.parametrize(
    "reply, says",
    [
        ({"data": {"results": [], "took": 3}}, 'has no key "hits" (its keys: "results", "took")'),
        ({"data": {"hits": None}}, "`data.hits` is null"),
        ({"data": {"hits": {"chunk": "x"}}}, "found a dict, not a list"),
        ({"data": ["x"]}, '`data` is a list, not an object with the key "hits"'),
        ({"error": "index not ready"}, 'the reply has no key "data" (its keys: "error")'),
    ],
)
@pytest.mark.parametrize("section", ["target.response", "target.retrieve.response"])
def test_contexts_that_a_path_does_not_find_are_an_error_naming_the_path(reply, says, section):
    with pytest.raises(TargetError) as raised:
        map_contexts(SEARCH, reply, section=section)

    message = str(raised.value)
    assert message.startswith(f"malformed response: {section}.contexts `data.hits` found "), message
    assert says in message, message


def test_only_an_empty_list_is_no_contexts():
    assert map_contexts(SEARCH, {"data": {"hits": []}}, section="target.retrieve.response") == []


def test_an_answer_call_whose_contexts_key_is_missing_is_an_error_not_an_empty_list():
    with pytest.raises(
        TargetError, match=r'target.response.contexts `sources` found nothing.*no key "sources"'
    ):
        map_reply({"answer": "answer", "contexts": "sources"}, {"answer": "yes", "documents": []})


def test_an_answer_path_that_finds_nothing_says_which_key_is_there_instead():
    with pytest.raises(TargetError) as raised:
        map_reply({"answer": "result.text"}, {"result": {"answer": "yes"}})

    assert '`result` has no key "text" (its keys: "answer")' in str(raised.value)


def test_an_expression_that_is_not_a_plain_path_names_what_the_reply_is():
    assert where_the_path_ends("hits[0].x", {"took": 1}) == 'the reply is an object (its keys: "took")'


@pytest.mark.parametrize(
    "value, words",
    [
        (1, "the number 1"),
        ("1", 'the string "1"'),
        (True, "the boolean true"),
        (None, "null"),
        ([1], "a list"),
    ],
)
def test_values_are_described_with_their_type(value, words):
    assert described(value) == words
