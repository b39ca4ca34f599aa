"""Drafts from Docusaurus MDX and Sphinx MyST pages, and a heading carried into a reference whose
subject it names (issue 55). Each test failed on the code before the fix: a MyST role's target
and a bare PEP number reached the passage, `{/*` was a keyword, the pointer "attrs#795" and
"Sometimes, they …" stood as references, and a reference under the heading `HTTPX_LOG_LEVEL`
was dropped instead of carried; "Pellentesque elementum dignissim ultricies." was a reference."""

from __future__ import annotations

import pytest

from rag_ci.core.questionset.documents import CitationStyle
from rag_ci.core.questionset.draft_checks import reference_problem
from rag_ci.core.questionset.draft_plan import Job, Plan
from rag_ci.core.questionset.draft_text import pick_keywords
from rag_ci.core.questionset.drafts import Written, build_drafts
from rag_ci.core.questionset.heading_subject import subject_of, with_heading
from rag_ci.core.questionset.passages import Passage, cut_passages

MYST = """\
# Glossary

(slotted-classes)=

Slotted classes must implement {meth}`__getstate__ <object.__getstate__>` and
{meth}`~object.__setstate__` to be pickled, as {pep}`307` describes for protocol 2 and {rfc}`7231` does not.

:::{note}
Slotted classes use less memory than dict classes for 1,000 or more instances.
:::
"""

MDX = """\
---
slug: mdx-blog-post
---

import Tabs from '@theme/Tabs';

Blog posts support Docusaurus Markdown features such as admonitions and tabs.

:::tip

Use a `{/*` `truncate` `*/}` comment to limit blog post size in the list view.

:::

{/* truncate */}

<Tabs><TabItem value="npm">Run the build once to publish the 3 posts.</TabItem></Tabs>
"""


def test_placeholder_text_is_no_prose_to_draft_from():
    page = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Pellentesque elementum dignissim ultricies.\n\n"
        "Blog posts support Docusaurus Markdown features such as admonitions and tabs."
    )
    [passage] = cut_passages("docusaurus", "blog/first.mdx", page)
    assert passage.text == "Blog posts support Docusaurus Markdown features such as admonitions and tabs."


def test_a_myst_role_reads_as_its_title_and_a_pep_or_rfc_by_its_name():
    [passage] = cut_passages("attrs", "glossary.md", MYST)
    assert (
        "Slotted classes must implement `__getstate__` and `object.__setstate__` to be pickled"
        in passage.text
    )
    assert "as PEP 307 describes for protocol 2 and RFC 7231 does not." in passage.text
    assert (
        "<object" not in passage.text
        and "{meth}" not in passage.text
        and "(slotted-classes)=" not in passage.text
    )
    assert "Slotted classes use less memory than dict classes for 1,000 or more instances." in passage.text


def test_mdx_imports_admonition_fences_and_comments_stay_out_of_passages_and_keywords():
    [passage] = cut_passages("docusaurus", "blog/mdx-blog-post.mdx", MDX)
    assert (
        "import Tabs" not in passage.text
        and ":::" not in passage.text
        and "{/* truncate */}" not in passage.text
    )
    assert "slug:" not in passage.text
    reference = "Use a `{/*` `truncate` `*/}` comment to limit blog post size in the list view."
    assert pick_keywords(reference, [passage.text]) == (
        "truncate",
        "comment",
    )  # before: ('{/*', 'truncate', '*/}')


@pytest.mark.parametrize(
    ("reference", "kind"),
    [
        (":::tip Use the power of React to create interactive blog posts.", "MDX or MyST syntax"),
        ("Blog posts are short. {/* truncate */} The rest is hidden.", "MDX or MyST syntax"),
        ("import Tabs from '@theme/Tabs'; tabs group content.", "MDX or MyST syntax"),
        ("Slotted classes must implement {meth}`__getstate__` to be pickled.", "MDX or MyST syntax"),
        ("Your constructive feedback is welcome in both attrs#795 and pyright#1782.", "a pointer"),
        ("Sometimes, they're referred to as next-generation or NG APIs.", "named elsewhere"),
        ("In Python 3.14, this is no longer necessary.", "named elsewhere"),
        ("If you create a class with `frozen=True` this is fulfilled by definition.", "named elsewhere"),
        ("Although attrs would serve you just as well!", "main clause is elsewhere"),
    ],
)
def test_mdx_and_myst_syntax_pointers_and_dangling_subjects_drop_a_reference(reference, kind):
    problem = reference_problem(reference, [reference])
    assert problem is not None and kind in problem, problem


@pytest.mark.parametrize(
    "reference",
    [
        "If you set `RELAY_HOME`, it names the folder of the queue files.",
        "Use a `{/*` `truncate` `*/}` comment to limit blog post size in the list view.",
        "PEP 681 describes how type checkers see dataclass-like decorators.",
    ],
)
def test_a_reference_naming_its_own_subject_or_quoting_syntax_in_code_is_kept(reference):
    assert reference_problem(reference, [reference]) is None


@pytest.mark.parametrize(
    ("heading", "subject"),
    [
        ("HTTPX_LOG_LEVEL", "`HTTPX_LOG_LEVEL`"),
        ("`--workers`", "`--workers`"),
        ("attrs.define()", "`attrs.define()`"),
        ("Slotted classes {#slotted}", "Slotted classes"),
        ("2.1 Connection pools", "Connection pools"),
        ("Overview", None),
        ("Notes", None),
        ("How it works", None),
        ("Why not dataclasses?", None),
        ("Deploy your site", None),
        ("Getting started", None),
        ("A Short History Lesson", None),
        ("TL;DR", None),
        ("Dataclasses Enter The Arena", None),
        ("Philosophy", None),
        ("Currency", "Currency"),
    ],
)
def test_a_heading_names_a_subject_unless_it_is_generic_a_question_or_a_task(heading, subject):
    assert subject_of(heading) == subject


HTTPX = Passage(
    "httpx",
    "environment_variables.md",
    0,
    "Environment variables",
    "# Environment variables\n\nThe HTTPX library reads three environment variables at start-up.\n\n"
    "## HTTPX_LOG_LEVEL\n\nIf this environment variable is set, HTTPX logs each request at that level.\n\n"
    "## Notes\n\nIt defaults to the WARNING level of the standard logging module.",
)


def _drafted(reference: str) -> tuple[list, list]:
    job = Job("d", "document", 1, "Reasoning", (HTTPX,))
    plan = Plan(jobs=(job,), documents=1, wanted={"plain": 1})
    written = [Written("d", "What does HTTPX_LOG_LEVEL do?", reference, quality=1.0)]
    style = {"httpx": CitationStyle()}
    return build_drafts(plan, written, styles=style, ambiguous={}, seed=1, document_terms={})


def test_a_reference_whose_subject_is_a_heading_naming_it_carries_the_heading():
    drafts, rejected = _drafted("If this environment variable is set, HTTPX logs each request at that level.")
    assert rejected == []
    assert drafts[0].reference == (
        "`HTTPX_LOG_LEVEL`: If this environment variable is set, HTTPX logs each request at that level."
    )
    assert "HTTPX_LOG_LEVEL" in drafts[0].keywords


def test_a_reference_under_a_generic_heading_is_still_dropped():
    drafts, rejected = _drafted("It defaults to the WARNING level of the standard logging module.")
    assert drafts == [] and "named elsewhere" in rejected[0].reason


def test_with_heading_finds_the_section_that_holds_the_reference():
    text = "## `--workers`\n\nIt sets the number of worker processes.\n\n## Notes\n\nIt is ignored with --reload."
    passages = [("Options", text)]
    assert with_heading("It sets the number of worker processes.", passages) == (
        "`--workers`: It sets the number of worker processes."
    )
    assert with_heading("It is ignored with --reload.", passages) is None
    # a heading of words stands for "they" only when plural
    assert with_heading("They use less memory.", [("Slotted classes", "They use less memory.")]) == (
        "Slotted classes: They use less memory."
    )
    assert with_heading("They use less memory.", [("Memory layout", "They use less memory.")]) is None
