"""A changed chunk explained by its words, whatever inline markup holds them (issue 55): a value
in a code span, a name in emphasis, a pointer in a link is the same word as without. Each test
failed on the code before the fix; the report is read as GitHub renders it (cmark-gfm)."""

from __future__ import annotations

import pytest

from builders import metric, question, run
from gfm import rendered
from rag_ci.core.base.inline_markup import without_inline_markup
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Context

KW, HIT = "keyword_coverage", "hit_at_k"
CHUNK = "docs/limits.md#2"


def _asked(keyword: str, contexts: list[Context], *, passed: bool):
    q = question(
        "LIMIT",
        "pass" if passed else "fail",
        corpora=("docs",),
        answer=keyword if passed else "80",
        metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0 if passed else 0.0, 0.6, kind="answer")],
    )
    q.keywords = [keyword]
    q.contexts = contexts
    q.failure_stage = None if passed else "generation"
    return q


def _evidence(keyword: str, before: list[Context], after: list[Context]) -> str:
    base = run(_asked(keyword, before, passed=True))
    head = run(_asked(keyword, after, passed=False))
    [change] = compare(base, head).regressions
    return change.retrieval_evidence[0]


@pytest.mark.parametrize(
    ("was", "now"),
    [
        ("`50000`", "`80`"),  # a code span: the review's case
        ("``50000``", "``80``"),  # reST's literal
        ("**50000**", "**80**"),  # emphasis
        ("[50000](limits.md#tokens)", "[80](limits.md#tokens)"),  # a link
    ],
)
def test_a_value_edited_inside_inline_markup_reads_as_the_edit_never_as_a_cut(was: str, now: str):
    text = "The request body may hold at most {} tokens per call; longer bodies are refused with 413."
    before = [Context(text=text.format(was), doc_id="docs", source=CHUNK)]
    after = [Context(text=text.format(now), doc_id="docs", source=CHUNK)]
    # before the fix: "the chunk that held “50000” (docs/limits.md#2) was cut"
    assert _evidence("50000", before, after) == (
        "the chunk that held “50000” (docs/limits.md#2) now reads “… most 80 tokens …” where it read “… most 50000 tokens …”"
    )


def test_the_edit_in_a_code_span_reads_the_same_in_the_comment_as_github_renders_it():
    text = "The request body may hold at most {} tokens per call; longer bodies are refused with 413."
    base = run(
        _asked("50000", [Context(text=text.format("`50000`"), doc_id="docs", source=CHUNK)], passed=True)
    )
    head = run(
        _asked("50000", [Context(text=text.format("`80`"), doc_id="docs", source=CHUNK)], passed=False)
    )
    page = rendered(render_markdown(head, compare(base, head))).text()
    assert "now reads “… most 80 tokens …” where it read “… most 50000 tokens …”" in page
    assert "was cut" not in page


def test_a_keyword_split_by_emphasis_is_still_found_in_the_chunk_that_holds_it():
    """The PR set a word in emphasis: "request timeout" is still in "request *timeout*", no chunk
    lost it, so retrieval is not blamed."""
    text = "The default request {} is 30 seconds for every call the client makes to the server."
    base = run(
        _asked(
            "request timeout",
            [Context(text=text.format("timeout"), doc_id="docs", source=CHUNK)],
            passed=True,
        )
    )
    head = run(
        _asked(
            "request timeout",
            [Context(text=text.format("*timeout*"), doc_id="docs", source=CHUNK)],
            passed=False,
        )
    )
    [change] = compare(base, head).regressions
    assert not any("the chunk that held" in e for e in change.retrieval_evidence)


def test_words_moved_into_another_chunk_and_edited_there_are_not_called_cut():
    """Re-chunking moved the sentence to the next chunk, and the PR edited its value: the words
    are not gone from every chunk, so "was cut" would send the reader to the chunker."""
    first = "Tokens. The request body may hold at most `50000` tokens per call; longer bodies are refused."
    kept = "Tokens. The request body may hold at most"
    moved = "The request body may hold at most `80` tokens per call; longer bodies are refused. Retries."
    before = [Context(text=first, doc_id="docs", source=CHUNK)]
    after = [
        Context(text=kept, doc_id="docs", source=CHUNK),
        Context(text=moved, doc_id="docs", source="docs/limits.md#3"),
    ]
    assert _evidence("50000", before, after) == (
        "the chunk that held “50000” (docs/limits.md#2) now reads “… most 80 tokens …” in docs/limits.md#3"
        " where it read “… most 50000 tokens …”"
    )


def test_a_chunk_that_lost_its_end_with_the_words_is_still_cut():
    text = "Tokens. The request body may hold at most `50000` tokens per call; longer bodies are refused."
    before = [Context(text=text, doc_id="docs", source=CHUNK)]
    after = [Context(text="Tokens. The request body may hold at most", doc_id="docs", source=CHUNK)]
    assert _evidence("50000", before, after) == "the chunk that held “50000” (docs/limits.md#2) was cut"


@pytest.mark.parametrize(
    ("marked", "plain"),
    [
        ("Set `timeout` to **80**, see [the limits](limits.md).", "Set timeout to 80, see the limits."),
        (
            "Call `__init__` or ``*args``; keep snake_case_names.",
            "Call __init__ or *args; keep snake_case_names.",
        ),
        ("Use :option:`--max` and `Foo <https://x.example>`_.", "Use --max and Foo."),
        ("A <b>bold</b> _word_ and ~~old~~ ![logo](a.png)", "A bold word and old logo"),
    ],
)
def test_inline_markup_is_removed_and_the_words_kept(marked: str, plain: str):
    assert without_inline_markup(marked) == plain
