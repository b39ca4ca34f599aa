"""The fake writer phrases a question a person could ask from the sentence it picked as the
reference (rag_ci.judges.fake_questions), instead of "What do the documents say about ...?"."""

import re

import pytest

from rag_ci.judges.fake_questions import plain, question_from

MARKUP = re.compile(r"[`*_\[\]{}<>#|]")


@pytest.mark.parametrize(
    "sentence, question",
    [
        ("The delay is 10 ms on CAN.", "What is the delay?"),
        ("Uvicorn supports the WebSocket protocol as defined in RFC 6455.", "What does Uvicorn support?"),
        (
            "The lifespan protocol runs as a sibling task alongside your main application.",
            "How does the lifespan protocol run?",
        ),
        (
            "The SansIO implementation was released in Uvicorn version 0.35.0 in June 2025.",
            "When was the SansIO implementation released?",
        ),
        (
            "Uvicorn will strip any response body from HTTP requests with the `HEAD` method.",
            "What will Uvicorn strip?",
        ),
        (
            "Use `--host 0.0.0.0` to make the application available on your local network.",
            "How do I make the application available on my local network?",
        ),
        (
            "For this example, we'll need to install `docker`, docker-compose and `uv`.",
            "What will I need to install?",
        ),
        (
            "If you have multiple workers, each worker will execute the lifespan independently.",
            "What will each worker execute?",
        ),
        (
            "Command Line: Use command line options when running Uvicorn directly.",
            "How do I use command line options?",
        ),
        (
            "The [uvloop](https://uvloop.dev) implementation provides **greater** performance.",
            "What does the uvloop implementation provide?",
        ),
        ("Each drive unit has a serial number.", "What does each drive unit have?"),
    ],
)
def test_a_sentence_becomes_the_question_it_answers(sentence, question):
    assert question_from(sentence) == question


@pytest.mark.parametrize(
    "sentence",
    [
        "This means that if the application sends a message, the response will stop.",  # a pronoun for subject
        "Any new requests or connections that occur once this limit has been reached will result in a 503.",  # too long
        "Because the framework is incremental, any changes to your source files flow through at once.",
        "It is often useful.",
    ],
)
def test_a_sentence_no_rule_reads_gets_no_question(sentence):
    assert question_from(sentence) is None


def test_markup_and_heading_attributes_are_gone_from_the_text_questions_come_from():
    assert (
        plain("Warning about replacing { #warning-about-replacing } the `app` with [docs](x.md) <b>now</b>")
        == "Warning about replacing the app with docs now"
    )
    assert plain("{* ../docs_src/app.py hl[3] *} Run **it**.") == "Run it."


def test_every_question_phrased_from_the_example_manuals_is_a_sentence_ending_in_a_question_mark():
    from pathlib import Path

    from rag_ci.judges.fake_writer import _sentences

    manuals = Path(__file__).resolve().parents[2] / "examples" / "corpora"
    phrased = [
        q
        for path in sorted(manuals.rglob("*.md"))
        for s in _sentences(path.read_text())
        if (q := question_from(s)) is not None
    ]
    assert len(phrased) >= 10
    assert all(q.endswith("?") and q[0].isupper() and not MARKUP.search(q) for q in phrased), phrased
