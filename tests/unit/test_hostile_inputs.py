"""Hostile inputs get a clear error with file (and line) and exit 2, never a traceback.

Exit 1 means "regression": a traceback (also exit 1) on a bad file would read as one. Each case
runs the command line as a user would, through click's CliRunner with exceptions *not* caught
by the test, so a traceback fails the test instead of passing as exit 1."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from builders import question, run, write
from rag_ci.cli import cli
from rag_ci.files.results_file import save_results

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


@pytest.mark.parametrize(
    "char", ["\x00", "\x01", "\x1b", "\x7f", "\ufffe"], ids=["NUL", "SOH", "ESC", "DEL", "U+FFFE"]
)
@pytest.mark.parametrize("where", ["questions.yml", "rag-ci.yml"])
def test_control_characters_in_the_config_or_question_set_name_the_file_line_and_column(
    tmp_path, char, where
):
    write(
        tmp_path / "questions.yml",
        QUESTIONS.replace("question: q", f"question: q{char}" if where == "questions.yml" else "question: q"),
    )
    write(tmp_path / "rag-ci.yml", CONFIG + (f"# note{char}\n" if where == "rag-ci.yml" else ""))
    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))
    assert result.exit_code == 2
    line = 3 if where == "questions.yml" else 4
    assert f"{where}:{line}:" in result.output and f"control character U+{ord(char):04X}" in result.output


def test_a_question_set_that_is_proc_self_environ_is_refused_without_quoting_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_CI_TEST_SECRET", "s3cr3t-value-0123456789")
    write(tmp_path / "rag-ci.yml", CONFIG.replace("questions.yml", "/proc/self/environ"))
    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))
    assert (
        result.exit_code == 2
        and "rag-ci.yml:1: questions '/proc/self/environ' is outside the repository" in result.output
    )
    assert "s3cr3t" not in result.output


def test_control_characters_in_the_accepted_file_name_it(tmp_path):
    save_results(tmp_path / "r.json", run(question("A")))
    write(tmp_path / "accepted.yml", "accepted:\n  - {id: A, question_hash: h\x00, reason: r}\n")
    result = cli_run(
        "compare",
        str(tmp_path / "r.json"),
        str(tmp_path / "r.json"),
        "--accepted",
        str(tmp_path / "accepted.yml"),
    )
    assert result.exit_code == 2 and "accepted.yml:2:" in result.output and "U+0000" in result.output


@pytest.mark.parametrize(
    "name, content, expected",
    [
        ("labels.yml", "labels:\n  - {id: A, correct: tr\x00ue}\n", "labels.yml:2:"),
        ("labels.csv", "id,correct\nA,tr\x00ue\n", "labels.csv:2:"),
        ("labels.csv", "id,correct\nA," + "x" * 200_000 + "\n", "not a readable CSV"),
        ("labels.yml", "labels: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than"),
        ("labels.csv", b"\xff\xfe\x00 not utf-8", "cannot read the labels file"),
    ],
)
def test_calibrate_with_a_hostile_labels_file_names_it_and_exits_2(tmp_path, name, content, expected):
    save_results(tmp_path / "r.json", run(question("A")))
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = cli_run("calibrate", str(path), str(tmp_path / "r.json"))
    assert result.exit_code == 2 and expected in result.output and name in result.output


HOSTILE_HISTORY = [
    '{"schema": 1, "pass_rate": NaN}',
    '{"schema": 1, "pass_rate": 1e999}',
    '{"pass_rate": 0.5, "git_sha": "trunc',
    "[" * 50_000 + "]" * 50_000,
    '{"pass_rate": 0.9, "metrics": [1], "flaky": "all", "latency_p95_s": "fast", "timestamp": 7, "questions": 10000000000000000000000}',
    '{"pass_rate": 1.0, "git_sha": "' + "a" * 40 + '", "timestamp": "2025-01-02"}',
]


@pytest.mark.parametrize("command", ["history", "compare", "report"])
def test_bad_history_lines_are_skipped_with_a_warning_never_fatal(tmp_path, command):
    save_results(tmp_path / "r.json", run(question("A")))
    history = write(tmp_path / "eval_history.jsonl", "\n".join(HOSTILE_HISTORY) + "\n")
    args = {
        "history": ["history", str(history)],
        "compare": ["compare", str(tmp_path / "r.json"), str(tmp_path / "r.json"), "--history", str(history)],
        "report": ["report", str(tmp_path / "r.json"), "--history", str(history)],
    }[command]
    result = cli_run(*args)
    assert result.exit_code == 0, result.output
    assert "skipped 4 unreadable line(s): line 1: not JSON" in result.output
    assert "line 4: nested too deeply" in result.output


@pytest.mark.parametrize("output", [".", "./", ""])
def test_an_output_that_names_no_file_is_refused_clearly(tmp_path, output, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "questions.yml", QUESTIONS)
    write(tmp_path / "rag-ci.yml", CONFIG)
    result = cli_run("run", "--config", "rag-ci.yml", "-o", output, "--no-progress")
    assert result.exit_code == 2 and "is a folder; give a file name, e.g. results.json" in result.output


@pytest.mark.parametrize("corpora_dir", ["../..", "/etc", "linked"])
def test_a_corpora_dir_outside_the_repository_is_refused_naming_the_config_and_line(tmp_path, corpora_dir):
    """The corpora are files of the repository under review, never /etc."""
    repo = tmp_path / "deep" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "linked").symlink_to("/etc")
    write(repo / "questions.yml", QUESTIONS)
    write(
        repo / "rag-ci.yml", CONFIG.replace("corpora: {a: {description: A}}", f"corpora_dir: {corpora_dir}")
    )
    result = cli_run("validate", "--config", str(repo / "rag-ci.yml"))
    assert result.exit_code == 2
    assert (
        f"rag-ci.yml:2: corpora_dir '{corpora_dir}'" in result.output
        and "outside the repository" in result.output
    )


def test_a_missing_corpora_dir_names_the_config_and_line(tmp_path):
    write(tmp_path / "questions.yml", QUESTIONS)
    write(tmp_path / "rag-ci.yml", CONFIG.replace("corpora: {a: {description: A}}", "corpora_dir: nowhere"))
    result = cli_run("validate", "--config", str(tmp_path / "rag-ci.yml"))
    assert result.exit_code == 2 and "rag-ci.yml:2: corpora_dir not found" in result.output


SECRET = "The vault password is hunter2-CORPUS-SECRET. Keep the credentials under the floor."
DOC = (
    "The drive unit delivers 250 W of continuous power. It weighs 3.2 kg and mounts at the bottom bracket. "
    "Its torque sensor samples the pedal force a thousand times per second.\n"
)


def _repository_with_links_out(tmp_path):
    """A repository whose corpora_dir holds a corpus with a file symlink and a folder symlink
    leaving it, and a corpus sub-folder that is itself a symlink outside."""
    outside = tmp_path / "outside"
    write(outside / "secret.md", SECRET + "\n")
    write(outside / "corpus" / "config.yml", "description: outside\n")
    write(outside / "corpus" / "secret.md", SECRET + "\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "corpora" / "a" / "config.yml", "description: A\n")
    write(repo / "corpora" / "a" / "doc.md", DOC)
    (repo / "corpora" / "a" / "notes.md").symlink_to(outside / "secret.md")
    (repo / "corpora" / "a" / "more").symlink_to(outside)
    (repo / "corpora" / "b").symlink_to(outside / "corpus")
    write(repo / "questions.yml", QUESTIONS)
    write(repo / "rag-ci.yml", CONFIG.replace("corpora: {a: {description: A}}", "corpora_dir: corpora"))
    return repo


def test_generate_never_reads_a_file_a_symlink_leads_outside_the_corpus_to(tmp_path):
    """Before: a contributed symlink made `generate` send local files to the writer and commit them."""
    repo = _repository_with_links_out(tmp_path)
    result = cli_run(
        "questions", "generate", "--config", str(repo / "rag-ci.yml"), "--writer", "fake", "--no-progress"
    )
    assert result.exit_code == 0, result.output
    text = (repo / "questions.yml").read_text()
    assert "hunter2" not in text and "vault" not in text and "doc_id: b" not in text
    assert "a/doc.md" in text  # the corpus's own document is drafted from
    assert "3 links outside the corpus not followed" in result.output


def test_validate_coverage_and_fingerprints_skip_links_leaving_the_corpus(tmp_path):
    from rag_ci.files.corpus_files import corpus_folders, read_corpora
    from rag_ci.files.project import load_project

    repo = _repository_with_links_out(tmp_path)
    write(repo / "rag.py", "def answer(request):\n    return {}\n")  # the entry validate looks for
    result = cli_run("validate", "--config", str(repo / "rag-ci.yml"), "--coverage")
    assert result.exit_code == 0, result.output
    assert "secret" not in result.output and "3 links outside the corpus not followed" in result.output
    project = load_project(repo / "rag-ci.yml")
    assert set(project.corpora) == {"a"}
    files = read_corpora(corpus_folders(project.root, project.corpora))
    assert [d.name for d in files.index.documents] == ["a/doc.md"] and files.links_outside == 2


@pytest.mark.parametrize("command", ["validate", "generate"])
@pytest.mark.parametrize("path", ["../outside", "/etc", "linked"])
def test_a_corpus_path_outside_the_repository_is_refused_naming_the_config_and_line(tmp_path, command, path):
    write(tmp_path / "outside" / "secret.md", SECRET + "\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "linked").symlink_to(tmp_path / "outside")
    write(repo / "questions.yml", QUESTIONS)
    write(
        repo / "rag-ci.yml",
        CONFIG.replace(
            "corpora: {a: {description: A}}", f"corpora:\n  a:\n    description: A\n    path: {path}"
        ),
    )
    args = (
        ["validate"]
        if command == "validate"
        else ["questions", "generate", "--writer", "fake", "--no-progress"]
    )
    result = cli_run(*args, "--config", str(repo / "rag-ci.yml"))
    assert result.exit_code == 2, result.output
    assert (
        f"rag-ci.yml:5: corpus 'a': path '{path}'" in result.output
        and "outside the repository" in result.output
    )
    assert "hunter2" not in (repo / "questions.yml").read_text()
