"""Files that are not what they claim, and values past any sensible size or depth: exit 2 with
one line naming the file and the cause, never a traceback (exit 1 is a regression's), never a hang."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from builders import write
from rag_ci.cli import cli

CONFIG = (
    "questions: questions.yml\ncorpora: {a: {description: A}}\ntarget: {kind: python, entry: 'rag:answer'}\n"
)
QUESTIONS = "version: 1\nquestions:\n  - {id: A, question: q, doc_id: a}\n"


def cli_run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}"
    )
    return result


@pytest.mark.parametrize("where", ["/dev/zero", "../elsewhere/questions.yml"])
def test_a_question_set_outside_the_repository_is_refused_naming_the_config_line(tmp_path, where):
    (tmp_path / "elsewhere").mkdir()
    write(tmp_path / "elsewhere" / "questions.yml", QUESTIONS)
    write(tmp_path / "repo" / "rag-ci.yml", CONFIG.replace("questions.yml", where))

    result = cli_run("validate", "--config", str(tmp_path / "repo" / "rag-ci.yml"))

    assert result.exit_code == 2, result.output
    assert f"rag-ci.yml:1: questions '{where}' is outside the repository" in result.output


@pytest.mark.timeout(60)
def test_a_question_set_that_is_a_fifo_or_a_folder_is_refused_without_waiting(tmp_path):
    write(tmp_path / "rag-ci.yml", CONFIG.replace("questions.yml", "pipe.yml"))
    os.mkfifo(tmp_path / "pipe.yml")

    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))

    assert result.exit_code == 2 and "pipe.yml: not a regular file" in result.output, result.output
    write(tmp_path / "rag-ci.yml", CONFIG.replace("questions.yml", "folder"))
    (tmp_path / "folder").mkdir()
    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))
    assert result.exit_code == 2 and "folder: not a regular file" in result.output, result.output


def test_a_response_expression_thousands_deep_is_refused_at_config_load(tmp_path):
    write(tmp_path / "questions.yml", QUESTIONS)
    deep = "(" * 3000 + "answer" + ")" * 3000
    write(
        tmp_path / "rag-ci.yml",
        CONFIG.replace(
            "target: {kind: python, entry: 'rag:answer'}",
            f"target: {{kind: http, url: 'http://127.0.0.1:9/ask', response: {{answer: '{deep}'}}}}",
        ),
    )

    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))

    assert result.exit_code == 2, result.output
    assert "rag-ci.yml" in result.output and "JMESPath expression" in result.output


def test_questions_import_of_a_line_with_a_5000_digit_number_names_the_line(tmp_path):
    write(tmp_path / "rag-ci.yml", CONFIG)
    write(tmp_path / "questions.yml", QUESTIONS)
    write(tmp_path / "log.jsonl", '{"question": "fine?"}\n{"question": "big?", "n": ' + "9" * 5000 + "}\n")

    result = cli_run(
        "questions", "import", str(tmp_path / "log.jsonl"), "--config", str(tmp_path / "rag-ci.yml")
    )

    assert result.exit_code == 2, result.output
    assert "log.jsonl:2: not a JSON object" in result.output and "digits" in result.output


def test_the_reply_depth_check_agrees_with_a_parser_on_shapes_around_the_bound():
    import json
    import random

    from rag_ci.targets.reply_json import MAX_REPLY_DEPTH, too_deep

    def depth(value) -> int:
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        return 1 + max((depth(c) for c in children), default=0) if isinstance(value, (dict, list)) else 0

    rng = random.Random(7)

    def make(levels: int):
        if levels == 0:
            return rng.choice([1, "x]]", "[{", None])
        inner = [make(levels - 1)] + [
            rng.choice([[], {}, [[3]], "]}", [{"k": [1]}]]) for _ in range(rng.randint(0, 2))
        ]
        rng.shuffle(inner)
        return inner if rng.random() < 0.5 else {f"k{i}": v for i, v in enumerate(inner)}

    for levels in [*range(1, 8), *range(MAX_REPLY_DEPTH - 4, MAX_REPLY_DEPTH + 4)] * 20:
        value = make(levels)
        assert too_deep(json.dumps(value).encode()) == (depth(value) > MAX_REPLY_DEPTH), levels


def test_a_schema_key_points_to_the_editor_comment_that_does_the_same(tmp_path):
    write(tmp_path / "questions.yml", QUESTIONS)
    write(tmp_path / "rag-ci.yml", "$schema: https://example.org/rag-ci.schema.json\n" + CONFIG)

    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))

    assert result.exit_code == 2, result.output
    assert "rag-ci.yml:1: $schema: unknown field" in result.output
    assert (
        "# yaml-language-server: $schema=https://example.org/rag-ci.schema.json` as the first line"
        in result.output
    )
