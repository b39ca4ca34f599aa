"""Passages from a document's structure: each format parsed, what is no prose left out.

A passage is what `questions generate` asks the writer to draft from and what the review page
shows beside a draft: it must hold the document's sentences whole, and none of its markup."""

import re

import pytest

from builders import REPO
from rag_ci.core.questionset.doc_blocks import plain_text_blocks
from rag_ci.core.questionset.html_blocks import html_blocks
from rag_ci.core.questionset.passages import cut_passages, document_format
from rag_ci.core.questionset.rst_blocks import plain_rst_blocks, reader, rst_blocks

REAL_DOCS = REPO / "tests" / "fixtures" / "real_docs" / "corpora"


def text_of(passages) -> str:
    return "\n\n".join(p.text for p in passages)


def test_a_comment_inside_a_fenced_code_block_is_no_heading():
    doc = (
        "# Install\n\nTo install the tool and start it, run these two commands in a shell:\n\n"
        "```bash\n# create the environment first\npython -m venv .venv\n```\n\n"
        "The tool then listens on port 8000 and answers every request within a second or two.\n"
    )
    passages = cut_passages("c", "install.md", doc, min_words=5)
    # was: a second section "create the environment first"
    assert [p.heading for p in passages] == ["Install"]
    assert "# create the environment first" in passages[0].text  # inside its code block, kept as code
    assert passages[0].text.count("```") == 2


def test_images_badges_html_tags_link_lists_and_diagrams_are_no_prose():
    doc = """<p align="center"><img src="logo.png" alt="logo"></p>

[![build](https://img.shields.io/badge/build-passing-green)](https://ci.example.org)
![Linux](https://img.shields.io/badge/Linux-FCC624?style=for-the-badge)

# Lumen server

The Lumen server answers questions from a folder of documents, and it
re-reads the folder whenever a file changes, so answers always follow the documents.

## Table of contents
- [Install](#install)
- [Run](#run)

## How it works

```mermaid
sequenceDiagram
    Client->>Server: POST /v1/ask
```

The server splits each document into passages of about <b>300 words</b> before it indexes them.
See the [usage guide](docs/usage.md) for the options it takes.

See the [installation documentation](install.md) for more information.
"""
    text = text_of(cut_passages("c", "README.md", doc, min_words=5))
    for gone in (
        "<img",
        "<p",
        "<b>",
        "shields.io",
        "![",
        "](",
        "sequenceDiagram",
        "->>",
        "[Install]",
        "Table of contents",
        "installation documentation",
    ):  # a paragraph that only points to a link is no prose either
        assert gone not in text, gone
    # wrapped lines of one paragraph are one sentence again: none is cut where the source wrapped it
    assert (
        "and it re-reads the folder whenever a file changes, so answers always follow the documents." in text
    )
    assert (
        "passages of about 300 words before it indexes them." in text
        and "See the usage guide for the options" in text
    )


def test_code_is_kept_only_where_the_prose_before_it_introduces_it():
    doc = (
        "## Disabling lifespan\n\nTo disable the lifespan protocol, set the option when you start the server:\n\n"
        "```bash\nuvicorn main:app --lifespan off\n```\n\nBy default the lifespan protocol is on when the application "
        "supports it.\n\n```python\nasync def app(scope, receive, send):\n    pass\n```\n"
    )
    text = cut_passages("c", "lifespan.md", doc, min_words=5)[0].text
    assert "uvicorn main:app --lifespan off" in text  # introduced: the code is the subject
    assert "async def app" not in text  # an example after a sentence that does not introduce it


def test_mkdocs_admonitions_and_tabs_keep_their_content_and_lose_their_markers():
    doc = (
        '# Quickstart\n\nUvicorn is available on PyPI, so installing it takes a single command:\n\n=== "pip"\n'
        '    ```bash\n    pip install uvicorn\n    ```\n\n!!! warning "Windows"\n    The uvloop event loop does not run '
        "on Windows, so Uvicorn falls back to asyncio there.\n"
    )
    text = cut_passages("c", "index.md", doc, min_words=5)[0].text
    assert "===" not in text and "!!!" not in text
    assert "```bash\npip install uvicorn\n```" in text  # the fence inside the tab stays a fence
    assert "The uvloop event loop does not run on Windows, so Uvicorn falls back to asyncio there." in text


def test_tables_give_their_rows_that_say_something_in_words():
    doc = (
        "# Templates\n\n| Template | Description |\n|---|---|\n| [`QA RAG`](qa/) | A question-answering pipeline over "
        "your documents, with a demo endpoint. |\n| `v2` | 42 |\n"
    )
    text = cut_passages("c", "README.md", doc, min_words=3)[0].text
    assert "`QA RAG`: A question-answering pipeline over your documents, with a demo endpoint." in text
    assert "|" not in text and "42" not in text


def test_an_html_page_gives_its_headings_and_prose_and_nothing_of_its_scripts_styles_or_navigation():
    page = """<!doctype html><html><head><title>T</title><style>p {color: red}</style></head><body>
<nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<h1>Charging</h1><p>The standard charger fills an empty battery in <b>6.5&nbsp;hours</b>.<br>Charge only between 0 &deg;C and 40 &deg;C.</p>
<script>alert("x")</script><ul><li>Keep the battery dry.</li><li><a href="/a">A link only</a></li></ul>
<pre class="language-bash">charge --fast</pre></body></html>"""
    blocks = html_blocks(page)
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Charging"),
        (
            "paragraph",
            "The standard charger fills an empty battery in 6.5 hours.\nCharge only between 0 °C and 40 °C.",
        ),
        ("item", "- Keep the battery dry."),
    ]
    assert document_format("site/charging.html") == "html"


RST = """\
Charging
========

The standard charger fills an empty battery in 6.5 hours. See :ref:`the storage rules <storage>`
and `the vendor page <https://example.org>`_ for ``--fast`` charging.

.. note::

   Charge only between 0 °C and 40 °C.

.. image:: charger.png

.. include:: /etc/passwd

Storage
-------

Keep it at 30 to 60 percent charge::

    charge --level 50

- Check the level every 3 months.
"""


@pytest.mark.parametrize(
    "read", [rst_blocks, plain_rst_blocks], ids=["installed reader", "plain-text reading"]
)
def test_restructured_text_is_read_with_or_without_docutils(read):
    blocks = read(RST)
    texts = [b.text for b in blocks]
    assert [b.text for b in blocks if b.kind == "heading"] == ["Charging", "Storage"]
    assert (
        "The standard charger fills an empty battery in 6.5 hours. See the storage rules and the vendor page for "
        "`--fast` charging." in texts
    )
    assert "Charge only between 0 °C and 40 °C." in texts  # a note keeps its body
    assert "Keep it at 30 to 60 percent charge:" in texts and "charge --level 50" in texts  # introduced code
    assert "- Check the level every 3 months." in texts
    # nothing included, no directive
    assert not any("root:" in t or "charger.png" in t or ".." in t for t in texts)
    assert reader() in ("docutils", "plain text")


def test_plain_text_paragraphs_are_joined_across_their_wrapped_lines():
    blocks = plain_text_blocks(
        "Storage\n\nKeep the battery at 30 to 60 percent\ncharge in a dry room.\n\n- one item here\n- two\n"
    )
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Storage"),
        ("paragraph", "Keep the battery at 30 to 60 percent charge in a dry room."),
        ("item", "- one item here"),
        ("item", "- two"),
    ]


def test_source_code_and_data_files_give_no_passages():
    assert (
        cut_passages("c", "app.py", "# A comment that reads like prose for a while, long enough.\nx = 1\n")
        == []
    )
    assert cut_passages("c", "config.yaml", "# Settings\nkey: value\n") == []
    assert document_format("notes") == "text" and document_format("NOTES", "# Title\n\nText.") == "markdown"


@pytest.mark.parametrize("path", sorted(p.relative_to(REAL_DOCS).as_posix() for p in REAL_DOCS.rglob("*.md")))
def test_a_real_projects_documentation_gives_passages_without_markup(path):
    """uvicorn's and llm-app's documentation (tests/fixtures/real_docs): badges, HTML blocks,
    mermaid, admonitions, tabs, tables and link lists, as a user indexed them."""
    source = (REAL_DOCS / path).read_text(encoding="utf-8")
    passages = cut_passages(path.split("/", 1)[0], path, source)
    assert passages
    for passage in passages:
        prose = re.sub(r"```.*?```", "", passage.text, flags=re.S)  # code the prose introduced is code
        prose = re.sub(r"`[^`\n]+`", "`x`", prose)
        assert not re.search(
            r"</?[a-z]+[ >/]|!\[|\]\(|shields\.io|sequenceDiagram|^\s*\||^\s*(!!!|===)", prose, re.M
        ), (passage.label, prose)
        for line in prose.splitlines():  # no paragraph ends where the source wrapped a sentence
            assert not re.search(r"\b(the|a|an|of|to|and|with|in)$", line.strip()), (passage.label, line)


def test_front_matter_and_footnote_markers_are_no_text():
    doc = (
        "---\ntitle: Charging\nsidebar_position: 2\n---\n\n# Charging\n\nThe standard charger fills an empty battery "
        "in 6.5 hours.[^1] Charge only between 0 °C and 40 °C, or the charger pauses.\n\n[^1]: Measured at 20 °C.\n"
    )
    passages = cut_passages("c", "charging.md", doc, min_words=5)
    assert [p.heading for p in passages] == ["Charging"]
    assert (
        "title:" not in passages[0].text
        and "sidebar_position" not in passages[0].text
        and "[^1]" not in passages[0].text
    )
    assert "in 6.5 hours. Charge only between 0 °C and 40 °C, or the charger pauses." in passages[0].text


def test_html_the_standard_parser_cannot_read_is_cut_at_that_point_not_a_traceback():
    # Python 3.11's html.parser raises AssertionError on `<![x` (an unknown marked section).
    blocks = html_blocks("<p>The charger fills the battery in six hours.</p><![i](j) <p>More text here.</p>")
    assert blocks[0].text == "The charger fills the battery in six hours."
    assert cut_passages("c", "d.md", "Some words <![i](j) and more words here.\n") is not None


def test_myst_roles_directives_and_targets_read_as_sphinx_renders_them():
    doc = (
        "(options)=\n\n# Options\n\nAdd options with the {func}`option` decorator; they differ from "
        "{ref}`positional arguments <arguments>`.\n\n```{note}\nAn option name starts with one or two dashes.\n```\n\n"
        "```{toctree}\nquickstart\n```\n\n```{eval-rst}\n.. note::\n\n   A flag is an option that takes no value.\n```\n"
    )
    text = cut_passages("c", "options.md", doc, min_words=3)[0].text
    assert (
        text.startswith("# Options")
        and "(options)=" not in text
        and "toctree" not in text
        and "{" not in text
    )
    assert "Add options with the `option` decorator; they differ from positional arguments." in text
    assert (
        "An option name starts with one or two dashes." in text
        and "A flag is an option that takes no value." in text
    )


def test_a_sentence_with_an_autolink_is_prose_and_a_bare_autolink_is_not():
    doc = "# Docs\n\nRead the docs at <https://x.org/a/b/c/d> for details on setup and tuning of the server.\n\n<https://x.org/a>\n"
    text = cut_passages("c", "d.md", doc, min_words=3)[0].text
    assert "Read the docs at https://x.org/a/b/c/d for details on setup and tuning of the server." in text
    assert not text.rstrip().endswith("https://x.org/a")


def test_a_passage_drops_the_documents_control_characters():
    from rag_ci.core.questionset.passages import cut_passages

    text = "# Battery\n\nThe charger \x1b]0;pwned\x07fills the pack in 6.5 hours\x1b[8m, hidden\x9b2J.\tOK\n"

    [passage] = cut_passages("du2", "battery.md", text, min_words=1)

    assert not any(c in passage.text for c in "\x1b\x07\x9b")
    assert "fills the pack in 6.5 hours" in passage.text


def test_rest_notes_nested_a_thousand_deep_are_read_without_recursing_to_death():
    from rag_ci.core.questionset.passages import cut_passages

    lines = ["Pump", "====", ""]
    for level in range(1000):
        lines += [" " * level + ".. note::", ""]
    lines.append(" " * 1000 + "The pump runs at 10 bar for five minutes before it stops on its own.")

    passages = cut_passages("du2", "deep.rst", "\n".join(lines) + "\n", min_words=1)

    assert any("The pump runs at 10 bar" in p.text for p in passages)


def test_a_document_past_the_size_bound_is_drafted_from_its_head_only():
    from rag_ci.core.questionset.passages import MAX_DOCUMENT_CHARS, cut_passages

    paragraph = "The pump runs at 10 bar for five minutes before it stops on its own.\n\n"
    text = (
        "# Pumps\n\n"
        + paragraph * (3 * MAX_DOCUMENT_CHARS // len(paragraph))
        + "# Tail\n\nThe tail says the valve closes at 4 bar.\n"
    )

    passages = cut_passages("du2", "big.md", text)

    assert passages and not any("valve closes" in p.text for p in passages)
    assert sum(len(p.text) for p in passages) < 1.2 * MAX_DOCUMENT_CHARS
    assert cut_passages("du2", "big.md", text) == passages
