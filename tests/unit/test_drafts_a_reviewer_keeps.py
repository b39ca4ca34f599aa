"""Drafts a reviewer keeps (issue 55): references that stand on their own, no template syntax,
keywords that are distinctive terms. Each test failed on the code before the fix."""

from __future__ import annotations

import pytest

from rag_ci.core.questionset.distinctive import term_shares
from rag_ci.core.questionset.draft_checks import reference_problem
from rag_ci.core.questionset.draft_text import STOP_WORDS, pick_keywords
from rag_ci.core.questionset.passages import cut_passages

HUGO = """\
---
title: Install
---

# Install

The binary listens on port 7400 by default; see [the ports page]({{< relref "ports.md" >}}) for the others.

{{< notice warning >}}
Relay needs 256 MB of memory for every 10,000 open connections.
{{< /notice >}}

{{% alert %}}Tokens expire after 3600 seconds.{{% /alert %}}

Run {{ .Site.Params.install_command }} to fetch the newest release.

{% include note.html %} A rolling upgrade drains each node for 30 seconds.

Write `{{ .Title }}` in a layout to print the page's title.
"""


def test_hugo_shortcodes_and_template_tags_are_cleaned_from_passages_and_an_expression_drops_its_block():
    [passage] = cut_passages("relay", "install.md", HUGO)
    assert passage.text.splitlines()[2:] == [
        "The binary listens on port 7400 by default; see the ports page for the others.",
        "",
        "Relay needs 256 MB of memory for every 10,000 open connections.",
        "",
        "Tokens expire after 3600 seconds.",
        "",
        "A rolling upgrade drains each node for 30 seconds.",
        "",
        "Write `{{ .Title }}` in a layout to print the page's title.",  # in a code span: documentation
    ]


@pytest.mark.parametrize(
    "reference",
    [
        'The binary listens on port 7400; see {{< relref "ports.md" >}} for the others.',
        "Run {{ .Site.Params.cmd }} to fetch the newest release.",
        "{% include note.html %} A rolling upgrade drains each node for 30 seconds.",
    ],
)
def test_a_reference_holding_template_syntax_is_dropped_whoever_wrote_it(reference):
    assert reference_problem(reference, [reference]) == "markup in the reference (template syntax)"


@pytest.mark.parametrize(
    ("reference", "kind"),
    [
        ("Set the following environment variables.", "a lead-in"),
        ("Here is an example.", "a lead-in"),
        ("The retention is set per queue, as shown below.", "a lead-in"),
        ("For more details, please see relay-project/relay#1434.", "a pointer"),
        ("The binary listens on port 7400 by default; see the ports page for the others.", "a pointer"),
        ("Reports are kept for 30 days, as described in the retention guide.", "a pointer"),
        (
            "If this environment variable is set, Relay keeps its queue files in that folder.",
            "named elsewhere",
        ),
        ("It defaults to 72 hours.", "named elsewhere"),
        ("This is the ISO 4217 code of the account.", "named elsewhere"),
        ("Then you'll see the print statements when the application starts.", "named elsewhere"),
    ],
)
def test_a_reference_that_does_not_stand_on_its_own_is_dropped(reference, kind):
    problem = reference_problem(reference, [reference])
    assert (
        problem is not None
        and problem.startswith("the reference does not stand on its own")
        and kind in problem
    )


@pytest.mark.parametrize(
    "reference",
    [
        "Relay needs 256 MB of memory for every 10,000 open connections.",
        "It is possible to run 4 workers on one node.",
        "The `RELAY_HOME` variable names the folder of the queue files.",
        "Uvicorn supports the WebSocket protocol as defined in RFC 6455.",
    ],
)
def test_a_reference_that_stands_on_its_own_is_kept(reference):
    assert reference_problem(reference, [reference]) is None


def _generic(keyword: str) -> bool:
    return keyword.lower() in STOP_WORDS or keyword.lower() in {
        "accordance",
        "occasionally",
        "actually",
        "chapter",
        "example",
    }


def test_keywords_are_never_stop_words_adverbs_or_generic_words():
    """The review's keywords: `accordance`, `Occasionally`, `actually`, `chapter`."""
    reference = "Occasionally the chapter actually says, in accordance with the example, that consumers lag."
    keywords = pick_keywords(reference, [reference])
    assert not any(_generic(k) for k in keywords), keywords  # before: ['Occasionally', 'accordance']
    assert keywords == ("consumers",)


def test_identifiers_in_code_spans_are_keywords_before_plain_words():
    reference = "Queues are declared in `relay.yaml` under the `queues` key."
    assert pick_keywords(reference, [reference]) == ("relay.yaml", "queues")  # before: ('declared', 'Queues')


def test_a_word_most_documents_of_the_corpus_hold_is_not_a_keyword():
    documents = {f"doc{i}.md": frozenset({"relay", "broker", "honours", f"topic{i}"}) for i in range(5)}
    documents["doc0.md"] |= {"watermark"}
    reference = "The relay broker honours the watermark."
    assert pick_keywords(reference, [reference], shares=term_shares(documents)) == ("watermark",)
