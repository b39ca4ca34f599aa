"""Conversations in questions.yml: turns as questions, their hashes and validation, shards,
the request's messages, the live history, the judge's key, and the turn that broke."""

from __future__ import annotations

import textwrap

import pytest

from builders import metric, question, run
from rag_ci.core.base.api_mapping import check_template, render_request
from rag_ci.core.comparison.compare import compare
from rag_ci.core.questionset.question_lines import question_lines
from rag_ci.core.questionset.questions import Question, TurnQuestion, parse_question_set
from rag_ci.core.questionset.shards import select_shard, shard_of
from rag_ci.core.questionset.turns import (
    conversation_request,
    live_units,
    verdict_hash,
    whole_conversations,
    with_live_history,
)
from rag_ci.core.reporting.view import regression_rows
from rag_ci.errors import ValidationError

SET = textwrap.dedent("""\
    version: 1
    questions:
      - id: Q1
        question: What is the delay?
        doc_id: a
    conversations:
      - id: C1
        doc_id: a
        turns:
          - user: What is the delay on CAN?
            keywords: ["10 ms"]
          - user: And on LIN?
            doc_id: [a, b]
      - id: C2
        mode: scripted
        doc_id: b
        turns:
          - user: My unit shows E-07.
            assistant: E-07 is a low battery.
          - user: How do I fix it?
    """)


def parse(text: str = SET) -> dict[str, Question]:
    return parse_question_set(text, "questions.yml", {"a", "b"}).by_id()


def problems(text: str) -> list[str]:
    with pytest.raises(ValidationError) as excinfo:
        parse_question_set(text, "questions.yml", {"a", "b"})
    return excinfo.value.problems


def test_each_asked_turn_is_a_question_with_its_own_id_and_the_history_written_before_it():
    questions = parse()
    assert list(questions) == ["Q1", "C1#1", "C1#2", "C2#2"]  # a scripted history turn is not asked
    live, scripted = questions["C1#2"], questions["C2#2"]
    assert isinstance(live, TurnQuestion) and live.conversation == "C1" and live.turn == 2
    assert live.doc_id == ("a", "b") and questions["C1#1"].doc_id == (
        "a",
    )  # own doc_id, else the conversation's
    assert [(m.role, m.content) for m in live.history] == [("user", "What is the delay on CAN?")]
    assert [(m.role, m.content) for m in scripted.history] == [
        ("user", "My unit shows E-07."),
        ("assistant", "E-07 is a low battery."),
    ]


def test_a_turns_hash_covers_the_history_before_it_and_a_plain_questions_hash_is_unchanged():
    before = parse()
    edited = parse(SET.replace("What is the delay on CAN?", "What is the delay on the CAN bus?"))
    assert edited["C1#2"].content_hash != before["C1#2"].content_hash  # its first turn was edited
    assert edited["Q1"].content_hash == before["Q1"].content_hash
    alone = Question(id="Q1", question="What is the delay?", doc_id=("a",))
    assert before["Q1"].content_hash == alone.content_hash  # conversations beside it change nothing
    rewritten = parse(SET.replace("E-07 is a low battery.", "E-07 means the battery is low."))
    assert rewritten["C2#2"].content_hash != before["C2#2"].content_hash


def test_a_set_of_conversations_only_is_valid_and_an_empty_set_is_not():
    only = "version: 1\nconversations:\n  - id: C\n    doc_id: a\n    turns: [{user: hi}]\n"
    assert list(parse(only)) == ["C#1"]
    assert any("no questions yet" in p for p in problems("version: 1\nquestions: []\n"))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("  - id: C2\n    mode: scripted", "  - id: C2\n    mode: live"),
            "questions.yml:14: conversation C2",
        ),
        (("        assistant: E-07 is a low battery.\n", ""), "every turn but the last needs `assistant`"),
        (("doc_id: [a, b]", "doc_id: [a, c]"), "questions.yml:12: turn C1#2: unknown doc_id 'c'"),
        (("  - id: C1\n", "  - id: C#1\n"), "holds no '#'"),
        (("  - id: Q1\n", "  - id: C1#1\n"), "questions.yml:10: turn C1#1: duplicate id (first at line 3)"),
        (
            ("- user: And on LIN?", "- user: ' '"),
            "questions.yml:12: conversation C1: turns.1.user: the user's message is empty",
        ),
    ],
)
def test_a_bad_conversation_is_refused_naming_the_file_and_line(edit, expected):
    found = problems(SET.replace(*edit))
    assert any(expected in p for p in found), found


def test_a_conversation_is_never_split_across_shards():
    turns = [f"CONV-{n}#{t}" for n in range(200) for t in (1, 2, 3)]
    for count in (2, 3, 7):
        for n in range(200):
            assert len({shard_of(f"CONV-{n}#{t}", count) for t in (1, 2, 3)}) == 1
        shards = [select_shard([question(t) for t in turns], (i, count)) for i in range(1, count + 1)]
        assert sorted(q.id for s in shards for q in s) == sorted(turns) and all(shards)


def test_a_turns_request_carries_the_chat_messages_and_the_conversation_id():
    questions = parse()
    assert conversation_request(questions["Q1"]) == {}
    assert conversation_request(questions["C2#2"]) == {
        "messages": [
            {"role": "user", "content": "My unit shows E-07."},
            {"role": "assistant", "content": "E-07 is a low battery."},
            {"role": "user", "content": "How do I fix it?"},
        ],
        "conversation_id": "C2",
    }


def test_a_live_turn_is_asked_with_the_rags_own_earlier_answers():
    questions = list(parse().values())
    units = live_units(questions)
    assert [[q.id for q in u] for u in units] == [["Q1"], ["C1#1", "C1#2"], ["C2#2"]]
    first, second = units[1]
    said = with_live_history(second, units[1], {"C1#1": question("C1#1", answer="10 ms.")})
    assert conversation_request(said)["messages"] == [
        {"role": "user", "content": "What is the delay on CAN?"},
        {"role": "assistant", "content": "10 ms."},
        {"role": "user", "content": "And on LIN?"},
    ]
    assert said.content_hash == second.content_hash  # what the RAG said is not what was asked
    assert (
        with_live_history(second, units[1], {"C1#1": question("C1#1", verdict="error", answer=None)})
        == "C1#1"
    )
    assert with_live_history(first, units[1], {}) is not None


def test_the_judges_key_of_a_live_turn_holds_the_history_said():
    questions = parse()
    turn = questions["C1#2"]
    unit = [questions["C1#1"], turn]
    same = [with_live_history(turn, unit, {"C1#1": question("C1#1", answer="10 ms.")}) for _ in range(2)]
    other = with_live_history(turn, unit, {"C1#1": question("C1#1", answer="20 ms.")})
    assert verdict_hash(same[0]) == verdict_hash(same[1]) != verdict_hash(other)
    assert verdict_hash(questions["Q1"]) == questions["Q1"].content_hash


def test_a_resumed_live_conversation_is_asked_again_whole():
    questions = list(parse().values())
    done = [question("Q1"), question("C1#1"), question("C2#2")]
    assert [r.id for r in whole_conversations(done, questions)] == ["Q1", "C2#2"]


def test_annotations_find_each_turn_at_its_line():
    lines = question_lines(SET, "questions.yml")
    assert lines["Q1"] == 3 and lines["C1#1"] == 10 and lines["C1#2"] == 12 and lines["C2#2"] == 20


def test_an_http_template_sends_the_messages_and_the_conversation_id():
    template = {"model": "m", "messages": "{messages}", "user": "{conversation_id}", "note": "{messages}!"}
    check_template(template)  # the messages hold the question: no "{question}" needed
    request = conversation_request(parse()["C2#2"])
    body = render_request(
        template, {"id": "C2#2", "question": "How do I fix it?", "corpora": ["b"], **request}
    )
    assert body["messages"] == request["messages"] and body["user"] == "C2"
    assert body["note"].startswith('[{"role": "user"')
    plain = render_request(template, {"id": "Q1", "question": "What?", "corpora": ["a"]})
    assert plain["messages"] == [{"role": "user", "content": "What?"}] and plain["user"] == "Q1"


def turn(qid: str, verdict: str, *, after: list[str], keyword: float) -> object:
    """A turn's record: asked after the answers `after`, keyword coverage `keyword`."""
    record = question(
        qid, verdict, answer=f"answer {qid} {verdict}", metrics=[metric("keyword_coverage", keyword)]
    )
    messages = [{"role": "assistant", "content": a} for a in after] + [{"role": "user", "content": qid}]
    return record.model_copy(update={"request": {"id": qid, "messages": messages}})


def test_an_early_answer_that_changed_shows_the_later_turns_as_following_from_it():
    base = run(
        turn("C#1", "pass", after=[], keyword=1.0),
        turn("C#2", "pass", after=["one"], keyword=1.0),
        turn("C#3", "pass", after=["one", "two"], keyword=1.0),
        turn("D#1", "pass", after=[], keyword=1.0),
        turn("D#2", "pass", after=["same"], keyword=1.0),
    )
    head = run(
        turn("C#1", "fail", after=[], keyword=0.0),
        turn("C#2", "fail", after=["ONE"], keyword=0.0),  # its history holds C#1's new answer
        turn("C#3", "fail", after=["ONE", "two"], keyword=0.0),
        turn("D#1", "pass", after=[], keyword=1.0),
        turn("D#2", "fail", after=["same"], keyword=0.0),  # same history: a regression of its own
    )
    cmp = compare(base, head)
    assert cmp.verdict == "fail" and {c.id for c in cmp.regressions} == {"C#1", "C#2", "C#3", "D#2"}
    assert cmp.following == {"C#2": "C#1", "C#3": "C#1"}
    rows = {c.id: c for c in regression_rows(cmp)}
    assert set(rows) == {"C#1", "D#2"}
    assert "later turns following from it: C#2, C#3" in rows["C#1"].notes
    assert not any("following" in n for n in rows["D#2"].notes)
    assert rows["D#2"].history == ("assistant: same",)  # what the before/after shows it was asked after
    assert cmp.to_dict()["following"] == {"C#2": "C#1", "C#3": "C#1"}
