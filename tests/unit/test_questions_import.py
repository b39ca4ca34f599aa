"""The question set grows from reality: `questions import`, drafts refused by validate, `validate --coverage`."""

import json
import shutil

import pytest
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.review.questions_import import append_drafts, parse_log
from rag_ci.errors import ValidationError

LOG = (
    "\n".join(
        json.dumps(e)
        for e in [
            {
                "question": "Why does the DU-2 beep twice at start?",
                "corpora": ["du2"],
                "answer": "No idea.\n# not: yaml",
                "feedback": "thumbs down",
            },
            {"question": "What is the capital of Australia?"},  # already in the example set
            {"question": "How hot may the DU-3 motor get?", "corpora": "du3"},
        ]
    )
    + "\n"
)


@pytest.fixture
def example(tmp_path):
    shutil.copytree(
        EXAMPLES, tmp_path / "ex", ignore=shutil.ignore_patterns("baseline", "*.sqlite*", ".rag-ci*")
    )
    return tmp_path / "ex"


def test_import_appends_drafts_with_fresh_ids_and_keeps_the_file_as_it_was(example, tmp_path):
    original = (example / "questions.yml").read_text()
    (tmp_path / "log.jsonl").write_text(LOG)
    result = CliRunner().invoke(
        cli, ["questions", "import", str(tmp_path / "log.jsonl"), "--config", str(example / "rag-ci.yml")]
    )
    assert result.exit_code == 0, result.output
    assert "2 drafts added" in result.output and "1 already in the set" in result.output
    text = (example / "questions.yml").read_text()
    assert text.startswith(original)  # every comment and line of the file stays as it was
    added = text[len(original) :]
    assert "# logged answer: No idea. # not: yaml" in added and "# feedback: thumbs down" in added
    with pytest.raises(ValidationError) as refused:
        parse_question_set(text, "questions.yml", {"du2", "du3"})
    assert [p.split(": ", 1)[1] for p in refused.value.problems] == [
        "question LOG-001: a draft (fill reference, sources, then remove `status: draft`)",
        "question LOG-002: a draft (fill reference, sources, then remove `status: draft`)",
    ]
    again = CliRunner().invoke(
        cli, ["questions", "import", str(tmp_path / "log.jsonl"), "--config", str(example / "rag-ci.yml")]
    )
    assert "0 drafts added" in again.output and (example / "questions.yml").read_text() == text


def test_validate_refuses_drafts_with_exit_2_and_lists_them_by_line(example, tmp_path):
    (tmp_path / "log.jsonl").write_text(LOG)
    CliRunner().invoke(
        cli, ["questions", "import", str(tmp_path / "log.jsonl"), "--config", str(example / "rag-ci.yml")]
    )
    result = CliRunner().invoke(cli, ["validate", "--config", str(example / "rag-ci.yml")])
    assert result.exit_code == 2
    lines = (example / "questions.yml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, start=1) if "id: LOG-001" in text)
    assert f"questions.yml:{line}: question LOG-001: a draft" in result.output and "LOG-002" in result.output


def test_a_filled_in_question_without_the_draft_status_is_accepted():
    text = (
        "version: 1\nquestions:\n  - {id: A, question: q, reference: r, doc_id: a, sources: [a/x.md]}\n"
        "  - {id: B, question: q2, status: draft, reference: r, doc_id: a, sources: [a/x.md]}\n"
    )
    with pytest.raises(ValidationError, match=r"q.yml:4: question B: a draft \(review it"):
        parse_question_set(text, "q.yml", {"a"})
    assert len(parse_question_set(text.replace(", status: draft", ""), "q.yml", {"a"}).questions) == 2


def test_a_bad_log_line_is_named_by_file_and_line_and_nothing_is_written(example, tmp_path):
    (tmp_path / "log.jsonl").write_text(
        '{"question": "ok?"}\nnot json\n{"answer": "no question"}\n{"question": "x", "corpora": [1]}\n'
    )
    before = (example / "questions.yml").read_text()
    result = CliRunner().invoke(
        cli, ["questions", "import", str(tmp_path / "log.jsonl"), "--config", str(example / "rag-ci.yml")]
    )
    assert result.exit_code == 2
    assert "log.jsonl:2: not a JSON object" in result.output and "log.jsonl:3: `question`" in result.output
    assert "log.jsonl:4: `corpora`" in result.output
    assert (example / "questions.yml").read_text() == before


def test_ids_continue_after_the_highest_with_the_prefix_and_other_indentation_is_kept():
    text = "version: 1\nquestions:\n- id: LOG-007\n  question: old   # keep me\n"
    result = append_drafts(text, "q.yml", parse_log('{"question": "new"}\n', "l"))
    assert result.added == ("LOG-008",) and result.text.startswith(text)
    assert "\n- id: LOG-008\n  question: new\n  status: draft\n" in result.text


def test_coverage_reports_uncited_documents_and_thin_tags(example):
    (example / "corpora" / "du3" / "docs" / "recall-notice.md").write_text("# Recall\n")
    result = CliRunner().invoke(
        cli, ["validate", "--config", str(example / "rag-ci.yml"), "--coverage", "--min-tag-questions", "3"]
    )
    assert result.exit_code == 0, result.output
    assert "documents no question cites in `sources` (1 of 26):\n  du3/docs/recall-notice.md" in result.output
    assert "tags with fewer than 3 questions: security (2), specs (2)" in result.output
    assert "corpora no question routes to: none" in result.output


def test_coverage_reports_a_corpus_without_questions(example):
    (example / "corpora" / "du4" / "docs").mkdir(parents=True)
    (example / "corpora" / "du4" / "config.yml").write_text("description: DU-4\n")
    (example / "corpora" / "du4" / "docs" / "overview.md").write_text("# DU-4\n")
    result = CliRunner().invoke(cli, ["validate", "--config", str(example / "rag-ci.yml"), "--coverage"])
    assert result.exit_code == 0, result.output
    assert "corpora no question routes to: du4" in result.output and "du4/docs/overview.md" in result.output


def test_a_log_line_json_refuses_as_a_plain_value_error_is_reported_with_its_line():
    # json.loads raises a bare ValueError (not JSONDecodeError, no `.msg`) past Python's
    # integer-digits limit: a user's log line holding such a number.
    with pytest.raises(ValidationError) as caught:
        parse_log('{"question": "ok"}\n{"question": "q", "n": ' + "9" * 5000 + "}\n", "log.jsonl")
    [problem] = caught.value.problems
    assert problem.startswith("log.jsonl:2: not a JSON object: ") and "digits" in problem
