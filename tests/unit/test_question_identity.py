"""A regression cannot be hidden by renaming or deleting its question: ids are
printable and normalised, a question with a removed question's hash is that question, and what the
PR removed, added or edited and no longer passes is named at the top of the comment."""

from __future__ import annotations

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.identity import renamed_questions
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.reporting.render import render_markdown
from rag_ci.errors import ValidationError

HIT = "hit_at_k"


def _set(*ids: str) -> str:
    rows = "".join(f"  - id: {i}\n    question: What is asked {n}?\n" for n, i in enumerate(ids))
    return f"version: 1\nquestions:\n{rows}"


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ('"Q-2\\u200b"', "invisible or non-printing character U+200B (ZERO WIDTH SPACE)"),
        ('"Q-2\\u2060"', "U+2060 (WORD JOINER)"),
        ('"Q\\u00a02"', "U+00A0 (NO-BREAK SPACE)"),
        ('"\\u202eQ-2"', "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ('"Q-2\\u3164"', "U+3164"),
        ('"   "', "the id is blank"),
        ('" Q-2"', "starts or ends with whitespace"),
    ],
)
def test_validate_refuses_an_id_that_does_not_look_like_what_it_is_with_file_and_line(written, why):
    with pytest.raises(ValidationError) as err:
        parse_question_set(_set("Q-1", written), "eval/questions.yml")
    assert "eval/questions.yml:5:" in str(err.value) and why in str(err.value)
    assert "\u200b" not in str(err.value)  # the message shows the character as \u200b


def test_an_id_typed_in_nfd_is_the_same_id_in_nfc():
    nfd, nfc = "Cafe\u0301-1", "Caf\u00e9-1"
    [question_] = parse_question_set(
        f'version: 1\nquestions:\n  - id: "{nfd}"\n    question: q?\n', "q.yml"
    ).questions
    assert question_.id == nfc


def test_the_zero_width_rename_of_a_failing_question_still_gates():
    """Q-2 renamed to Q-2 + U+200B (refused by validate, but a results file may hold it) keeps its hash."""
    base = run(question("Q-1"), question("Q-2", metrics=[metric(HIT, 1.0, 1.0)]))
    head = run(question("Q-1"), question("Q-2\u200b", "fail", hash_="h", metrics=[metric(HIT, 0.0, 1.0)]))
    head.questions[1].question_hash = base.questions[1].question_hash  # same question, another id
    comparison = compare(base, head)
    assert [c.id for c in comparison.regressions] == ["Q-2\u200b"]  # today: "removed" + "new", nothing gates
    assert comparison.regressions[0].renamed_from == "Q-2" and comparison.verdict == "fail"
    assert comparison.removed == () and comparison.new == ()
    md = render_markdown(head, comparison)
    assert "<sub>renamed from Q-2</sub>" in md and "1 renamed" in md


def test_a_hash_shared_by_several_removed_questions_pairs_none_and_one_removed_pairs_every_added():
    assert renamed_questions([("a", "h"), ("b", "h")], [("c", "h")]) == {}
    assert renamed_questions([("a", "h")], [("c", "h"), ("d", "h")]) == {"c": "a", "d": "a"}
    assert renamed_questions([("a", "h"), ("keep", "k")], [("c", "h"), ("keep", "k")]) == {"c": "a"}


def test_a_passing_question_re_added_under_two_ids_both_failing_gates_on_both():
    """Before: removed and re-added as two ids with the same content, both failing, passed
    (the rename rule needed exactly one match): each copy is compared with the question it copies."""

    def same(record):
        record.question_hash = "same"  # the same content under another id
        return record

    base = run(question("KEEP"), same(question("Q-2", metrics=[metric(HIT, 1.0, 1.0)])))
    head = run(
        question("KEEP"),
        same(question("Q-2a", "fail", metrics=[metric(HIT, 0.0, 1.0)])),
        same(question("Q-2b", "fail", metrics=[metric(HIT, 0.0, 1.0)])),
    )
    comparison = compare(base, head)
    assert comparison.verdict == "fail"
    assert sorted(c.id for c in comparison.regressions) == ["Q-2a", "Q-2b"]
    assert {c.renamed_from for c in comparison.regressions} == {"Q-2"}
    assert comparison.removed == () and comparison.new == ()
    one_passing = run(
        question("KEEP"),
        same(question("Q-2a", metrics=[metric(HIT, 1.0, 1.0)])),
        same(question("Q-2b", "fail", metrics=[metric(HIT, 0.0, 1.0)])),
    )
    assert [c.id for c in compare(base, one_passing).regressions] == ["Q-2b"]  # the worst of them gates


def test_a_removed_passing_question_and_a_new_failing_one_open_the_comment_and_the_counts_line():
    base = run(question("KEEP"), question("GONE"), question("EDIT"))
    edited = question("EDIT", "fail", hash_="edited", metrics=[metric(HIT, 0.0, 1.0)])
    head = run(
        question("KEEP"), question("NEW", "fail", hash_="other", metrics=[metric(HIT, 0.0, 1.0)]), edited
    )
    comparison = compare(base, head)
    assert comparison.verdict == "pass"  # none of them gates: they are named instead
    md = render_markdown(head, comparison)
    top = md[: md.index("**0** regressions")]
    assert "> [!WARNING]" in top  # today: only inside the collapsed "Changed, new and removed" table
    assert "> - removed, passed on the baseline: GONE" in top and "> - new, failing: NEW" in top
    assert "> - edited, passed on the baseline and fail now: EDIT" in top
    assert (
        "· 1 removed (1 passed on the baseline) · 1 new (1 failing) · 1 edited (1 passed, fail now) —" in md
    )
