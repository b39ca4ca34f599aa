"""References a reviewer rejects on sight are dropped or repaired in the blocks, before any
passage is cut: orphaned lead-ins, sentences missing their subject, pointers, lines standing
as headings, MkDocs attribute lists, snippet includes and `///` blocks."""

from rag_ci.core.questionset.markdown_blocks import markdown_blocks


def texts(markdown: str) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in markdown_blocks(markdown)]


def test_a_lead_in_whose_code_block_was_dropped_goes_and_one_whose_code_is_kept_stays():
    long_code = "```toml\n" + "\n".join(f"key{i} = {i}" for i in range(20)) + "\n```\n"
    blocks = texts(
        "Config is read at start. For example, the following configuration...\n\n"
        + long_code
        + "\nTo start the server, run:\n\n```\nferryctl serve\n```\n"
    )
    assert blocks == [
        ("paragraph", "Config is read at start."),
        ("paragraph", "To start the server, run:"),
        ("code", "ferryctl serve"),
    ]


def test_a_lead_in_before_a_snippet_include_goes_and_a_lead_in_before_its_list_stays():
    blocks = texts(
        "You declare a route with the decorator:\n\n{* ../docs_src/tutorial001.py hl[4:6] *}\n\n"
        "The options are:\n\n- `--delete` removes files.\n"
    )
    assert blocks == [("paragraph", "The options are:"), ("item", "- `--delete` removes files.")]


def test_a_split_list_item_is_joined_to_its_term_and_a_lone_subjectless_sentence_goes():
    blocks = texts(
        "* `--verbose`\n\n    Will send debug level output to the console.\n\n"
        "* `--jobs N`: Sets the number of parallel uploads.\n\n"
        "Will send nothing else. The server logs to stderr.\n"
    )
    assert blocks == [
        ("item", "- `--verbose` will send debug level output to the console."),
        ("item", "- `--jobs N` sets the number of parallel uploads."),
        ("paragraph", "The server logs to stderr."),
    ]


def test_pointers_go_and_the_rest_of_their_paragraph_stays():
    blocks = texts(
        "Groups can be nested. See issue #409 for more on this issue.\n\n"
        "For an overview of the middleware Harbor ships with, see the middleware page.\n\n"
        "Middleware runs in the order it is listed.\n"
    )
    assert blocks == [
        ("paragraph", "Groups can be nested."),
        ("paragraph", "Middleware runs in the order it is listed."),
    ]


def test_a_bold_line_standing_alone_is_a_heading_and_attribute_lists_are_gone():
    blocks = texts(
        "# Routing { #routing }\n\n**Middleware order**\n\nMiddleware runs in order. { .note }\n\n"
        "[Get started](start.md){ .md-button }\n"
    )
    assert blocks == [
        ("heading", "Routing"),
        ("heading", "Middleware order"),
        ("paragraph", "Middleware runs in order."),
    ]


def test_pymdownx_blocks_and_snippet_lines_lose_their_markers_and_keep_their_prose():
    blocks = texts(
        "/// note | Credentials\nferryctl never stores credentials itself.\n///\n\n"
        '--8<-- "docs/snippets/example.md"\n\n!!! tip "Why?"\n    Checksums are compared.\n'
    )
    assert blocks == [
        ("paragraph", "ferryctl never stores credentials itself."),
        ("paragraph", "Checksums are compared."),
    ]


def test_a_name_in_capitals_is_no_verb_and_an_emoji_is_no_lead_in():
    blocks = texts(
        "- E-40: CAN bus timeout between drive unit and display. Check the bus termination.\n\n"
        "This will also create a `uv.lock` file. :sunglasses:\n"
    )
    assert blocks == [
        ("item", "- E-40: CAN bus timeout between drive unit and display. Check the bus termination."),
        ("paragraph", "This will also create a `uv.lock` file. :sunglasses:"),
    ]
