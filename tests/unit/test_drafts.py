"""Drafts from goldens: routed, checked, appended keeping the file; reviewed drafts applied."""

from dataclasses import replace

import pytest

from rag_ci.core.questionset.documents import CitationStyle
from rag_ci.core.questionset.draft_plan import Job, Plan
from rag_ci.core.questionset.drafts import Written, append_drafts, assign_ids, build_drafts
from rag_ci.core.questionset.passages import Passage
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.review.draft_review import apply_reviewed, parse_reviewed, review_entries
from rag_ci.errors import ValidationError

CHARGING = Passage(
    "du2",
    "docs/battery.md",
    1,
    "Charging",
    "## Charging\n\nThe standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.",
)
FAST = Passage(
    "du3",
    "docs/battery.md",
    1,
    "Charging",
    "## Charging\n\nThe 4 A fast charger reaches 80 percent in 2.5 hours.",
)
SET = """\
# The example's set
version: 3
questions:
    # an old one, with its comment
    -   id: DU2-BATTERY-01   # kept as it is
        question: "How long does the charger take?"
        reference: "6.5 hours."
        doc_id: du2
        sources: ["du2/battery.md"]
"""
STYLE = {"du2": CitationStyle(by_file_name=True), "du3": CitationStyle(by_file_name=True)}


def plan():
    return Plan(
        jobs=(
            Job("d", "document", 2, "Reasoning", (CHARGING,), misspelt=1),
            Job("x", "cross_corpus", 1, "Comparative", (CHARGING, FAST)),
            Job("o", "out_of_scope", 2, "In-Breadth", scope=("The 'du2' documents cover: battery.",)),
        ),
        documents=1,
        wanted={"plain": 1, "misspelt": 1, "cross_corpus": 1, "out_of_scope": 2},
    )


def built(written, **terms):
    return build_drafts(
        plan(),
        written,
        styles=STYLE,
        ambiguous={},
        seed=1,
        document_terms=terms
        or {"du2/docs/battery.md": frozenset({"charger", "powerpack", "hours", "standard"})},
    )


def test_goldens_become_routed_drafts_and_what_no_reviewer_should_see_is_dropped_with_its_reason():
    written = [
        Written(
            "d",
            "How long does the standard charger need to fill the PowerPack 400?",
            "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.",
            1.0,
        ),
        Written("d", "How long does charging take?", "About 6.5 hours with the 2 A charger.", 0.9),
        Written(
            "x",
            "How do the chargers of du2 and du3 compare?",
            "DU-2: 6.5 hours with 2 A; DU-3: 2.5 hours to 80 percent with 4 A.",
            1.0,
        ),
        Written("x", "How fast is charging?", "6.5 hours with the standard charger.", 1.0),  # one corpus only
        Written("o", "Which chess opening suits a beginner?", None, 1.0),
        # in scope after all
        Written("o", "How long does the standard charger take for a PowerPack?", None, 1.0),
    ]
    drafts, rejected = built(written)
    assert [(d.kind, d.doc_id, d.sources) for d in drafts] == [
        ("plain", ("du2",), ("du2/battery.md",)),
        ("misspelt", ("du2",), ("du2/battery.md",)),
        ("cross_corpus", ("du2", "du3"), ("du2/battery.md", "du3/battery.md")),
        ("out_of_scope", (), ()),
    ]
    plain, misspelt, cross, out = drafts
    assert plain.keywords == ("2 A", "6.5 hours", "PowerPack 400") and plain.passage_hash == (CHARGING.hash,)
    assert misspelt.question != "How long does charging take?" and misspelt.tags == (
        "generated",
        "adversarial",
        "misspelt",
    )
    assert all(k in CHARGING.text or k in FAST.text for k in cross.keywords)
    assert out.expect == "refusal" and out.reference is None and out.tags[-1] == "out_of_scope"
    assert [r.reason for r in rejected] == [
        "a cross-corpus reference that draws on one corpus only",
        "not out of scope: most of its words are in du2/docs/battery.md",
    ]


def test_an_input_that_never_passed_deepevals_filtration_is_dropped_not_drafted():
    drafts, rejected = built(
        [
            Written("d", "Tell me.", "The standard 2 A charger fills it.", 0.2),
            Written("d", "Which charger?", "I could not find this in the documents.", 1.0),
            Written("d", "", "x", 1.0),
        ]
    )
    assert drafts == [] and [r.reason.split(" (")[0] for r in rejected] == [
        "failed DeepEval's filtration",
        "the writer found no answer in its passage",
        "empty question",
    ]


def test_ids_are_corpus_document_and_number_after_the_highest_the_set_has():
    drafts, _ = built(
        [
            Written("d", "Q one?", "The standard 2 A charger fills it.", 1.0),
            Written("x", "Q two?", "DU-2: 2 A; DU-3: 4 A.", 1.0),
            Written("o", "Q three about chess?", None, 1.0),
        ]
    )
    ids = [d.id for d in assign_ids(drafts, {"DU2-BATTERY-01", "DU2-BATTERY-07", "OOS-CAPITAL"})]
    assert ids == ["DU2-BATTERY-08", "DU2-DU3-BATTERY-01", "OOS-01"]


def test_drafts_are_appended_keeping_the_files_comments_and_layout_and_validate_refuses_them():
    drafts, _ = built(
        [
            Written(
                "d",
                "How long: the standard charger?",
                "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.",
                1.0,
            ),
            Written("o", "Which chess opening suits a beginner?", None, 1.0),
        ]
    )
    # the job's one draft is its misspelt one: a question with a colon shows the quoting
    drafts = [
        replace(d, question="How long: the standard charger?") if d.kind == "misspelt" else d for d in drafts
    ]
    text = append_drafts(
        SET,
        "q.yml",
        assign_ids(drafts, {"DU2-BATTERY-01"}),
        writer="openai:gpt-4.1-mini-2025-04-14",
        date="2026-05-01",
    )
    assert text.startswith(SET)  # every comment and line of the file stays as it was
    added = text[len(SET) :]
    assert "\n    -   id: DU2-BATTERY-02\n        question: 'How long: the standard charger?'\n" in added
    assert "sources: [du2/battery.md]" in added and "keywords: [2 A, 6.5 hours, PowerPack 400]" in added
    assert "provenance: {writer: openai:gpt-4.1-mini-2025-04-14, date: '2026-05-01', passage_hash: " in added
    assert (
        "# drafted by `rag-ci questions generate` (writer openai:gpt-4.1-mini-2025-04-14, 2026-05-01)"
        in added
    )
    with pytest.raises(ValidationError) as refused:
        parse_question_set(text, "q.yml", {"du2", "du3"})
    assert [p.split(": ", 2)[2] for p in refused.value.problems] == [
        "a draft (machine-written by openai:gpt-4.1-mini-2025-04-14 on 2026-05-01, not yet reviewed: check it against its passage (rag-ci questions review), then remove `status: draft`)",
        "a draft (machine-written by openai:gpt-4.1-mini-2025-04-14 on 2026-05-01, not yet reviewed: check it is out of scope, then remove `status: draft`)",
    ]
    parsed = parse_question_set(text, "q.yml", {"du2", "du3"}, allow_drafts=True)
    assert parsed.by_id()["DU2-BATTERY-02"].provenance.passage_hash == (CHARGING.hash,)


def test_a_new_question_set_gets_its_first_drafts():
    drafts, _ = built([Written("o", "Which chess opening suits a beginner?", None, 1.0)])
    text = append_drafts(
        "version: 1\nquestions:\n", "q.yml", assign_ids(drafts, set()), writer="fake", date="2026-05-01"
    )
    assert parse_question_set(text, "q.yml", {"du2"}, allow_drafts=True).questions[0].id == "OOS-01"
    assert "\n  - id: OOS-01\n" in text


def drafted_set():
    drafts, _ = built(
        [
            Written(
                "d",
                "How long does the standard charger take?",
                "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.",
                1.0,
            ),
            Written("d", "How long does charging take?", "About 6.5 hours with the 2 A charger.", 1.0),
            Written("o", "Which chess opening suits a beginner?", None, 1.0),
        ]
    )
    return append_drafts(
        SET, "q.yml", assign_ids(drafts, {"DU2-BATTERY-01"}), writer="fake", date="2026-05-01"
    )


def test_the_review_page_shows_each_draft_beside_its_passage():
    questions = parse_question_set(drafted_set(), "q.yml", {"du2", "du3"}, allow_drafts=True)
    entries = review_entries(questions, {CHARGING.hash: CHARGING}, {})
    assert [e["id"] for e in entries] == ["DU2-BATTERY-02", "DU2-BATTERY-03", "OOS-01"]
    assert (
        entries[0]["passages"] == [{"label": CHARGING.label, "text": CHARGING.text}]
        and entries[0]["writer"] == "fake"
    )
    assert "out of scope" in entries[2]["note"] and entries[2]["passages"] == []
    moved = review_entries(questions, {}, {"du2/docs/battery.md": "the whole document"})
    assert moved[0]["passages"] == [{"label": "du2/docs/battery.md", "text": "the whole document"}]
    assert "passage changed" in moved[0]["note"]


def test_applying_a_review_approves_with_edits_removes_rejected_and_keeps_undecided_drafts():
    text = drafted_set()
    questions = parse_question_set(text, "q.yml", {"du2", "du3"}, allow_drafts=True)
    drafts = {q.id: q for q in questions.questions if q.status == "draft"}
    reviewed = parse_reviewed(
        f"""
reviewer: "ana"
drafts:
  - id: "DU2-BATTERY-02"
    hash: "{drafts["DU2-BATTERY-02"].content_hash}"
    decision: approve
    question: "How long does the standard 2 A charger   take?"
    keywords: ["6.5 hours", "2 A"]
  - id: "DU2-BATTERY-03"
    hash: "{drafts["DU2-BATTERY-03"].content_hash}"
    decision: reject
  - id: "OOS-01"
    hash: "{drafts["OOS-01"].content_hash}"
    decision:
""",
        "reviewed.yml",
    )
    result = apply_reviewed(text, "q.yml", drafts, reviewed)
    assert (result.approved, result.edited, result.rejected, result.undecided) == (
        ("DU2-BATTERY-02",),
        ("DU2-BATTERY-02",),
        ("DU2-BATTERY-03",),
        ("OOS-01",),
    )
    assert result.text.startswith(SET)
    after = parse_question_set(result.text, "q.yml", {"du2", "du3"}, allow_drafts=True).by_id()
    approved = after["DU2-BATTERY-02"]
    assert approved.status is None and approved.question == "How long does the standard 2 A charger take?"
    assert approved.keywords == ("6.5 hours", "2 A") and approved.provenance.reviewed_by == "ana"
    assert "DU2-BATTERY-03" not in after and after["OOS-01"].status == "draft"


def test_a_review_of_drafts_that_changed_since_or_a_malformed_file_is_refused_naming_the_line():
    text = drafted_set()
    drafts = {
        q.id: q
        for q in parse_question_set(text, "q.yml", {"du2"}, allow_drafts=True).questions
        if q.status == "draft"
    }
    stale = parse_reviewed(
        'drafts:\n  - {id: DU2-BATTERY-02, hash: "old", decision: approve}\n  - {id: NOPE, decision: reject}\n',
        "r.yml",
    )
    with pytest.raises(ValidationError) as refused:
        apply_reviewed(text, "q.yml", drafts, stale, "r.yml")
    assert refused.value.problems == [
        "r.yml:2: DU2-BATTERY-02 changed in q.yml since the review page was made: make a new page",
        "r.yml:3: NOPE is not a draft of q.yml (approved or removed since?)",
    ]
    with pytest.raises(ValidationError) as bad:
        parse_reviewed(
            "drafts:\n  - {id: A, decision: maybe}\n  - {id: B, keywords: [1]}\n  - {id: A}\n  - {decision: x}\n",
            "r.yml",
        )
    assert bad.value.problems == [
        "r.yml:2: A: decision must be approve or reject, got 'maybe'",
        "r.yml:3: B: keywords must be a list of non-empty strings",
        "r.yml:4: A is listed twice",
        "r.yml:5: each entry needs an `id`",
    ]


def test_a_reference_that_is_no_sentence_of_its_passage_is_dropped_with_its_reason():
    # Before: references that were an <img> tag, half a command, a code fence line, a bare heading, a cut sentence.
    passage = Passage(
        "du2",
        "docs/battery.md",
        1,
        "Charging",
        "## Charging\n\nThe standard 2 A charger fills an empty PowerPack 400 in 6.5 hours, unless the "
        "battery is colder than 0 °C.",
    )
    job = Plan(jobs=(Job("d", "document", 6, "Reasoning", (passage,)),), documents=1, wanted={"plain": 6})
    written = [
        Written("d", f"Question {n} about the PowerPack 400 charger?", reference, 1.0)
        for n, reference in enumerate(
            [
                '<img src="charger.png" alt="PowerPack 400 charger"> The 2 A charger.',
                "```bash\ncharge --powerpack 400\n```",
                "Charging",
                "battery is colder than 0 °C.",
                "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours, unless",
                "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours, unless the battery is colder than 0 °C.",
            ]
        )
    ]
    drafts, rejected = build_drafts(job, written, styles=STYLE, ambiguous={}, seed=1, document_terms={})
    assert [r.reason for r in rejected] == [
        "markup in the reference (an HTML tag)",
        "markup in the reference (a code fence)",
        "the reference is not a sentence (a heading of its passage)",
        "the reference is not a sentence (it starts mid-sentence)",
        "the reference is not a sentence (it does not end as one)",
    ]
    assert [d.reference for d in drafts] == [written[-1].reference]  # the passage's own sentence, whole


def test_a_reference_cut_out_of_a_sentence_of_its_passage_is_a_fragment():
    from rag_ci.core.questionset.draft_checks import reference_problem

    text = "## Usage\n\nIf you create a ContextVar in the lifespan task, it will not be available in the application task."
    assert reference_problem("It will not be available in the application task.", [text]) == (
        "the reference is a fragment of its passage (a sentence cut at its start)"
    )
    assert (
        reference_problem(
            "If you create a ContextVar in the lifespan task, it will not be available in the application "
            "task.",
            [text],
        )
        is None
    )
    # a writer's own wording (not the passage's words) is judged as a sentence only
    assert (
        reference_problem("A ContextVar set in the lifespan task is not visible to the application.", [text])
        is None
    )
    # code is no HTML tag
    assert reference_problem("Use `--host <str>` to bind the socket to a host.", ["..."]) is None


def test_the_adversarial_warning_compares_with_the_share_asked_for_and_does_not_round_into_it():
    # Before: "26 %" was printed for the documented 25 % default (the plan's own share, rounded up).
    from pathlib import Path

    from rag_ci.core.questionset.drafts import Draft
    from rag_ci.drafting.draft_report import Outcome, summary

    def draft(kind, n):
        return Draft(kind, "S", f"q{n}?", "r.", ("du2",), (), (), ("generated",), (), "d", id=f"S-{n:02d}")

    plan = Plan(
        jobs=(),
        documents=20,
        wanted={"plain": 61, "misspelt": 6, "vague": 5, "cross_corpus": 6, "out_of_scope": 6},
        asked=0.25,
    )
    # 20 of 81: 24.7 %
    added = [draft("plain", n) for n in range(61)] + [draft("misspelt", 61 + n) for n in range(20)]
    lines = summary(Outcome(plan=plan, writer="fake", added=added), Path("q.yml"))
    assert "(20 adversarial, 24.7%)" in lines[3]
    assert "warning: 24.7% of the drafts are adversarial, below the 25% asked for" in "\n".join(lines)
    # 20 of 80: 25 %
    enough = summary(Outcome(plan=plan, writer="fake", added=added[:60] + added[61:]), Path("q.yml"))
    assert (
        not [line for line in enough if line.startswith("warning")] and "(20 adversarial, 25%)" in enough[3]
    )


def test_a_runaway_question_or_reference_is_dropped_before_the_duplicate_check_compares_it():
    drafts, rejected = built(
        [
            Written("d", "What is " + "very " * 400 + "long?", "The standard 2 A charger fills it.", 1.0),
            Written("d", "How long does the charger take?", "The standard 2 A charger. " * 200, 1.0),
        ]
    )
    assert drafts == [] and [r.reason.split(" (")[0] for r in rejected] == [
        "a question too long",
        "a reference too long",
    ]
