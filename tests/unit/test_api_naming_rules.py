"""rag-ci's JMESPath string functions and `each_corpus` request templates."""

import pytest

from rag_ci.core.base.api_mapping import check_template, compile_expression, map_reply, render_request

REQUEST = {"id": "Q1", "question": "What is the delay?", "corpora": ["du2", "du3"]}


@pytest.mark.parametrize(
    "expression, value",
    [
        ("strip_prefix(p, 'data/')", "du2/docs/battery.md"),
        ("strip_prefix(p, 'nope/')", "data/du2/docs/battery.md"),  # no such prefix: unchanged
        ("strip_suffix(p, '.md')", "data/du2/docs/battery"),
        ("replace(p, '/docs/', '/')", "data/du2/battery.md"),
        ("split(p, '/')[1]", "du2"),
        ("split(p, '/')[-1]", "battery.md"),
        ("join('/', split(p, '/')[1:])", "du2/docs/battery.md"),
    ],
)
def test_string_functions_rewrite_an_apps_path_into_the_sets_naming(expression, value):
    assert compile_expression(expression).search({"p": "data/du2/docs/battery.md"}) == value


def test_a_reply_naming_sources_under_data_is_mapped_to_the_corpus_and_the_sets_source():
    raw = {
        "response": "6.5 hours",
        "context_docs": [{"text": "t", "metadata": {"path": "data/du2/battery.md"}, "dist": 0.1}],
    }
    mapped = map_reply(
        {
            "answer": "response",
            "contexts": "context_docs",
            "context": {
                "text": "text",
                "doc_id": "split(metadata.path, '/')[1]",
                "source": "strip_prefix(metadata.path, 'data/')",
                "score": "dist",
            },
        },
        raw,
    )
    assert mapped["contexts"] == [{"text": "t", "doc_id": "du2", "source": "du2/battery.md", "score": 0.1}]


@pytest.mark.parametrize(
    "expression, message",
    [
        ("strip_prefixx(a, 'x')", "unknown function strip_prefixx()"),
        ("split(a)", "split() takes 2 argument(s), got 1"),
        ("replace(a, 'x')", "replace() takes 3 argument(s), got 2"),
    ],
)
def test_an_unknown_function_or_a_wrong_argument_count_is_refused_when_the_config_is_read(
    expression, message
):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_expression(expression)


def test_each_corpus_repeats_a_template_per_routed_corpus_as_a_list_or_a_joined_string():
    template = {
        "prompt": "{question}",
        "all": "{corpora}",
        "text": "in {corpora}",
        "filters": {"each_corpus": "globmatch('data/{corpus}/**', path)", "join": " || "},
        "must": {"each_corpus": {"match": {"collection": "{corpus}"}, "ref": "{id}"}},
    }
    check_template(template)
    assert render_request(template, REQUEST) == {
        "prompt": "What is the delay?",
        "all": ["du2", "du3"],
        "text": "in du2,du3",
        "filters": "globmatch('data/du2/**', path) || globmatch('data/du3/**', path)",
        "must": [
            {"match": {"collection": "du2"}, "ref": "Q1"},
            {"match": {"collection": "du3"}, "ref": "Q1"},
        ],
    }
    assert (
        render_request({"q": "{question}", "sep": {"each_corpus": "{corpus}", "join": "|"}}, REQUEST)["sep"]
        == "du2|du3"
    )


@pytest.mark.parametrize(
    "template, message",
    [
        (
            {"q": "{question}", "f": {"each_corpus": "{corpus}", "sep": ","}},
            "each_corpus takes only `join` beside it, not sep",
        ),
        (
            {"q": "{question}", "f": {"each_corpus": {"c": "{corpus}"}, "join": ","}},
            "with `join`: the template must be a string",
        ),
        ({"q": "{question}", "f": {"each_corpus": "all"}}, "never names {corpus}"),
        ({"q": "{question}", "f": {"each_corpus": "{corpus} {corpora}"}}, "unknown placeholder {corpora}"),
        ({"q": "{question} {corpus}"}, r"\{corpus\} only inside each_corpus"),
    ],
)
def test_a_misused_each_corpus_is_refused_saying_how(template, message):
    with pytest.raises(
        ValueError, match=message.replace("{", r"\{").replace("}", r"\}") if "\\" not in message else message
    ):
        check_template(template)
