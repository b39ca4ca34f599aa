"""Bad input gets a clear error (file and line, exit 2), never a traceback or a hang."""

import json
import time
import tracemalloc

import pytest
from click.testing import CliRunner

from builders import question, run, write
from rag_ci.cli import cli
from rag_ci.core.base.yamlsrc import shape_problem
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.errors import TargetError, ValidationError
from rag_ci.files.results_file import save_results
from rag_ci.targets import parse_reply

CONFIG = (
    "questions: questions.yml\ncorpora: {a: {description: A}}\ntarget: {kind: python, entry: 'rag:answer'}\n"
)
ONE_QUESTION = "version: 1\nquestions:\n  - {id: A, question: q, doc_id: a}\n"


def validate(tmp_path, questions: str = ONE_QUESTION, config_extra: str = ""):
    write(tmp_path / "questions.yml", questions)
    write(tmp_path / "rag-ci.yml", CONFIG + config_extra)
    return CliRunner().invoke(
        cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")], catch_exceptions=False
    )


def alias_bomb(levels: int = 9) -> str:
    lines = ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return (
        "version: 1\nlols:\n"
        + "\n".join(lines)
        + f"\nquestions:\n  - {{id: A, question: q, doc_id: a, keywords: *l{levels - 1}}}\n"
    )


def test_an_alias_bomb_is_refused_at_once_without_growing_memory(tmp_path):
    text = alias_bomb()  # 9**9 strings once expanded
    tracemalloc.start()
    started = time.process_time()  # this process's CPU time: the machine's load does not count
    with pytest.raises(ValidationError) as caught:
        parse_question_set(text, "questions.yml", {"a"})
    elapsed = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 0.5 and peak < 20_000_000
    assert caught.value.problems[0].startswith("questions.yml:8: invalid YAML: aliases expand to more than")

    result = validate(tmp_path, text)
    assert result.exit_code == 2 and "refusing an alias bomb" in result.output


@pytest.mark.parametrize(
    "questions, line",
    [
        ("version: 1\nquestions:\n  - &q {id: A, question: q, doc_id: a, keywords: *q}\n", 3),
        ("version: 1\nquestions: &qs\n  - {id: A, question: q, doc_id: a}\n  - *qs\n", 4),
    ],
)
def test_a_recursive_alias_is_an_error_not_a_hang(tmp_path, questions, line):
    result = validate(tmp_path, questions)
    assert result.exit_code == 2
    assert f"questions.yml:{line}: invalid YAML: recursive alias" in result.output


@pytest.mark.parametrize(
    "nested",
    [
        "[" * 5000 + "]" * 5000,  # flow style
        "\n      " + "- " * 5000 + "x",  # block style: `- - - x` is [[['x']]]
    ],
)
def test_5000_deep_nesting_in_yaml_is_refused_quickly(tmp_path, nested):
    started = time.process_time()  # this process's CPU time: the machine's load does not count
    result = validate(
        tmp_path,
        f"version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: a\n    keywords: {nested}\n",
    )
    assert time.process_time() - started < 2
    assert result.exit_code == 2 and "invalid YAML: nested deeper than 100 levels" in result.output
    assert "questions.yml:" in result.output


def test_a_deep_config_is_refused_with_its_file(tmp_path):
    result = validate(tmp_path, config_extra="gate: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n")
    assert (
        result.exit_code == 2 and "rag-ci.yml:4: invalid YAML: nested deeper than 100 levels" in result.output
    )


def test_shape_problem_catches_shared_and_cyclic_data_the_c_parser_would_build():
    shared = ["x"]
    cyclic: list = []
    cyclic.append(cyclic)
    assert shape_problem({"a": shared, "b": shared}) is not None
    assert shape_problem(cyclic) is not None
    assert shape_problem({"a": [{"b": ["c"]}], "d": "e"}) is None


@pytest.mark.parametrize("version", ["[1, 2]", "1.5", "true", "0", '""'])
def test_a_version_that_is_not_a_positive_integer_or_a_string_is_refused_with_its_line(tmp_path, version):
    result = validate(
        tmp_path, f"# questions\nversion: {version}\nquestions:\n  - {{id: A, question: q, doc_id: a}}\n"
    )
    assert result.exit_code == 2
    assert "questions.yml:2: `version` must be a positive integer or a non-empty string" in result.output


@pytest.mark.parametrize("version, expected", [("3", 3), ("v2.1", "v2.1"), ('"1.5"', "1.5")])
def test_integer_and_string_versions_are_accepted(version, expected):
    assert (
        parse_question_set(f"version: {version}\nquestions:\n  - {{id: A, question: q}}\n", "q.yml").version
        == expected
    )


def test_an_empty_keyword_is_refused_with_its_line(tmp_path):
    result = validate(
        tmp_path,
        "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: a\n    keywords: ['10 ms', '  ']\n",
    )
    assert (
        result.exit_code == 2
        and "questions.yml:6: question A: keywords: an empty keyword matches every answer" in result.output
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            "metrics: {hit_at_k: {threshold: 1.5}}",
            "metrics.hit_at_k.threshold: Input should be less than or equal to 1",
        ),
        (
            "metrics: {mrr: {threshold: -1}}",
            "metrics.mrr.threshold: Input should be greater than or equal to 0",
        ),
        ("metrics: {mrr: {threshold: .nan}}", "metrics.mrr.threshold: Input should be a finite number"),
        (
            "judge: {provider: openai, model: gpt-4o, temperature: .nan}",
            "judge.temperature: Input should be a finite number",
        ),
        (
            "judge: {provider: openai, model: gpt-4o, temperature: 3}",
            "judge.temperature: Input should be less than or equal to 2",
        ),
        (
            "judge: {provider: openai, model: gpt-4o, timeout_s: .inf}",
            "judge.timeout_s: Input should be a finite number",
        ),
    ],
)
def test_out_of_range_and_nan_settings_are_refused_with_file_and_line(tmp_path, extra, message):
    result = validate(tmp_path, config_extra=extra + "\n")
    assert result.exit_code == 2 and f"rag-ci.yml:4: {message}" in result.output


@pytest.mark.parametrize(
    "usage, message",
    [
        ({"cost_usd": -0.01}, "usage.cost_usd: Input should be greater than or equal to 0 (got -0.01)"),
        ({"cost_usd": float("nan")}, "usage.cost_usd: Input should be a finite number (got nan)"),
        ({"input_tokens": -5}, "usage.input_tokens: Input should be greater than or equal to 0"),
    ],
)
def test_a_reply_with_a_negative_or_nan_cost_is_that_questions_error(usage, message):
    with pytest.raises(
        TargetError, match="malformed response: " + message.replace("(", r"\(").replace(")", r"\)")
    ):
        parse_reply({"answer": "ok", "usage": usage})


def _compare_with_edited_baseline(tmp_path, edit):
    save_results(tmp_path / "head.json", run(question("A")))
    data = json.loads((tmp_path / "head.json").read_text())
    edit(data)
    (tmp_path / "base.json").write_text(json.dumps(data))  # json.dumps writes NaN as the bare word NaN
    return CliRunner().invoke(
        cli, ["compare", str(tmp_path / "base.json"), str(tmp_path / "head.json")], catch_exceptions=False
    )


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("latency_s", float("nan"), "questions.0.latency_s: Input should be a finite number"),
        ("latency_s", float("inf"), "questions.0.latency_s: Input should be a finite number"),
        ("latency_s", -1.0, "questions.0.latency_s: Input should be greater than or equal to 0"),
    ],
)
def test_a_baseline_with_nan_or_negative_latency_is_refused(tmp_path, field, value, message):
    result = _compare_with_edited_baseline(
        tmp_path, lambda data: data["questions"][0].__setitem__(field, value)
    )
    assert result.exit_code == 2 and f"base.json is corrupt: {message}" in result.output


def test_a_baseline_with_a_negative_cost_is_refused(tmp_path):
    result = _compare_with_edited_baseline(
        tmp_path, lambda data: data["questions"][0]["usage"].__setitem__("cost_usd", -3.0)
    )
    assert (
        result.exit_code == 2
        and "base.json is corrupt: questions.0.usage.cost_usd: Input should be greater than or equal to 0 (got -3.0)"
        in result.output
    )


@pytest.mark.parametrize("depth", [80, 5000])
def test_a_deeply_nested_baseline_is_refused_naming_the_file(tmp_path, depth):
    save_results(tmp_path / "head.json", run(question("A")))
    text = (
        (tmp_path / "head.json")
        .read_text()
        .replace('"request": {', '"request": {"deep": ' + "[" * depth + "]" * depth + ", ", 1)
    )
    (tmp_path / "base.json").write_text(text)
    result = CliRunner().invoke(
        cli, ["compare", str(tmp_path / "base.json"), str(tmp_path / "head.json")], catch_exceptions=False
    )
    assert result.exit_code == 2
    assert (
        f"baseline {tmp_path / 'base.json'} is not a rag-ci results.json: nested deeper than 64 levels"
        in result.output
    )
