"""The question set: parsing, hashes, and every validation error names file, line and id."""

import pytest

from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.errors import ValidationError

CORPORA = {"mss54", "mss60"}


def errors_of(text: str) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        parse_question_set(text, "eval/questions.yml", CORPORA)
    return caught.value.problems


def test_parses_single_cross_corpus_and_refusal_questions():
    qs = parse_question_set(
        """
version: 7
questions:
  - id: EVT-01
    question: "What is the delay?"
    reference: "10 ms"
    doc_id: mss60
    sources: ["mss60/evt.md"]
    keywords: ["10 ms", "CAN"]
    tags: [numeric]
  - id: CMP-02
    question: "How do they differ?"
    doc_id: [mss54, mss60]
  - id: OOS-01
    question: "Who is your CEO?"
    expect: refusal
""",
        "q.yml",
        CORPORA,
    )
    evt, cmp_, oos = qs.questions
    assert qs.version == 7
    assert evt.doc_id == ("mss60",) and evt.keywords == ("10 ms", "CAN") and evt.tags == ("numeric",)
    assert cmp_.doc_id == ("mss54", "mss60")
    assert oos.is_refusal and oos.doc_id == ()


def test_questions_share_no_per_object_bookkeeping_and_copies_stay_independent():
    # pydantic's "fields set" per question was ~730 bytes: 35 MiB of a 50,000-question set.
    text = "version: 1\nquestions:\n  - {id: A, question: q a, doc_id: mss54, tags: [x]}\n  - {id: B, question: q b, doc_id: mss60}\n"
    first, second = parse_question_set(text, "q.yml", CORPORA).questions
    assert first.model_fields_set is second.model_fields_set
    edited = first.model_copy(update={"question": "changed"})
    assert (edited.question, first.question) == ("changed", "q a") and not first.model_fields_set
    assert parse_question_set(text, "q.yml", CORPORA).questions[0] == first


def test_question_hash_changes_with_reference_but_not_with_tags():
    base = "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: mss54\n    reference: {ref}\n    tags: [{tag}]\n"
    h1 = parse_question_set(base.format(ref="x", tag="t1"), "q.yml", CORPORA).questions[0].content_hash
    h2 = parse_question_set(base.format(ref="x", tag="t2"), "q.yml", CORPORA).questions[0].content_hash
    h3 = parse_question_set(base.format(ref="y", tag="t1"), "q.yml", CORPORA).questions[0].content_hash
    assert h1 == h2 != h3


def test_set_hash_changes_with_version():
    text = "version: {v}\nquestions:\n  - id: A\n    question: q\n    doc_id: mss54\n"
    assert (
        parse_question_set(text.format(v=1), "q", CORPORA).content_hash
        != parse_question_set(text.format(v=2), "q", CORPORA).content_hash
    )


def test_bad_yaml_names_file_and_line():
    (problem,) = errors_of("version: 1\nquestions:\n  - id: A\n    question: [unclosed\n")
    assert problem.startswith("eval/questions.yml:") and "invalid YAML" in problem


def test_duplicate_id_names_both_lines():
    (problem,) = errors_of(
        "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: mss54\n  - id: A\n    question: r\n    doc_id: mss54\n"
    )
    assert problem == "eval/questions.yml:6: question A: duplicate id (first at line 3)"


def test_unknown_doc_id_lists_known_corpora():
    (problem,) = errors_of("version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: mss99\n")
    assert problem == "eval/questions.yml:5: question A: unknown doc_id 'mss99' (corpora: mss54, mss60)"


def test_unknown_field_is_named_with_its_line():
    (problem,) = errors_of(
        "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: mss54\n    refrence: typo\n"
    )
    assert problem == "eval/questions.yml:6: question A: refrence: unknown field"


def test_empty_question_is_refused():
    (problem,) = errors_of("version: 1\nquestions:\n  - id: A\n    question: '  '\n    doc_id: mss54\n")
    assert problem == "eval/questions.yml:4: question A: question: question is empty"


def test_missing_doc_id_on_in_scope_question():
    (problem,) = errors_of("version: 1\nquestions:\n  - id: A\n    question: q\n")
    assert "question A: doc_id is required" in problem and problem.startswith("eval/questions.yml:3:")


def test_all_problems_are_reported_at_once():
    problems = errors_of(
        "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: nope\n  - id: B\n    question: ''\n    doc_id: mss54\n"
    )
    assert len(problems) == 2


def test_missing_version_and_empty_list():
    problems = errors_of("questions: []\n")
    assert any("missing `version`" in p for p in problems)
    assert any("no questions yet: run `rag-ci questions generate`" in p for p in problems)


def test_question_without_id_is_labelled_by_position():
    (problem,) = errors_of("version: 1\nquestions:\n  - question: q\n    doc_id: mss54\n")
    assert problem.startswith("eval/questions.yml:") and "question #1: id: Field required" in problem
