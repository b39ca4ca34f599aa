"""`rag-ci init`: a project from nothing, never overwriting; the workflows it writes are the
repository's own."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.cli.init_workflows import WORKFLOWS, released_action, shipped_workflow, user_workflow
from rag_ci.core.config import parse_config

REPO = Path(__file__).resolve().parents[2]


def _documents(root: Path, *corpora: str) -> None:
    for corpus in corpora:
        (root / "docs" / corpus).mkdir(parents=True)
        (root / "docs" / corpus / "guide.md").write_text(
            f"# {corpus}\n\nThe {corpus} unit charges in 6.5 hours.\n"
        )


def test_the_workflows_init_ships_are_the_repositorys_own():
    for name in WORKFLOWS:
        assert shipped_workflow(name) == (REPO / ".github" / "workflows" / name).read_text(), (
            f"rag_ci/templates/workflows/{name} differs from .github/workflows/{name}: "
            "run `sh .ci/refresh-workflow-templates` and commit the copies"
        )


def test_a_users_copy_of_a_workflow_uses_the_released_action_at_the_repository_root():
    action = released_action()
    pr = user_workflow(shipped_workflow("rag-ci-pr.yml"), None, action=action)
    assert f"uses: {action}\n" in pr and "uses: ./" not in pr and "working-directory" not in pr
    assert "your repository:" not in pr.split("working-directory")[0]  # the `uses:` comment went too
    comment = user_workflow(shipped_workflow("rag-ci-comment.yml"), None, action=action)
    assert f"- uses: {action}\n" in comment and "actions/checkout" not in comment


def test_init_finds_the_corpora_guesses_the_target_and_writes_config_workflows_and_an_empty_set(tmp_path):
    _documents(tmp_path, "manual-a", "manual-b")
    (tmp_path / "Dockerfile").write_text("FROM python:3.12-slim\n")
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes"])
    assert done.exit_code == 0, done.output
    assert (
        "2 corpora: manual-a (docs/manual-a, 1 documents), manual-b (docs/manual-b, 1 documents); target docker"
        in done.output
    )
    config = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml")
    assert {name: spec.path for name, spec in config.corpora.items()} == {
        "manual-a": "docs/manual-a",
        "manual-b": "docs/manual-b",
    }
    assert config.target.kind == "docker" and config.questions == "questions.yml"
    assert "questions: []" in (tmp_path / "questions.yml").read_text()
    assert sorted(p.name for p in (tmp_path / ".github" / "workflows").iterdir()) == sorted(WORKFLOWS)


def test_init_asks_how_to_reach_the_rag_when_not_told_yes(tmp_path):
    _documents(tmp_path, "a", "b")
    done = CliRunner().invoke(
        cli, ["init", str(tmp_path), "--no-workflows"], input="http\nhttp://127.0.0.1:9000/ask\n"
    )
    assert done.exit_code == 0, done.output
    config = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml")
    assert config.target.kind == "http" and config.target.url == "http://127.0.0.1:9000/ask"
    assert not (tmp_path / ".github").exists()


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    _documents(tmp_path, "a", "b")
    (tmp_path / "questions.yml").write_text("mine\n")
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes"])
    assert done.exit_code == 2 and "not overwriting: questions.yml" in done.output
    assert (tmp_path / "questions.yml").read_text() == "mine\n" and not (tmp_path / "rag-ci.yml").exists()


def test_init_without_documents_says_where_it_looked(tmp_path):
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes"])
    assert (
        done.exit_code == 2
        and "no documents found in docs/ or documents/" in done.output
        and "--docs" in done.output
    )


def test_validate_on_the_empty_set_says_to_generate_questions(tmp_path):
    _documents(tmp_path, "a", "b")
    assert CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"]).exit_code == 0
    done = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert done.exit_code == 2
    assert "questions.yml:5: no questions yet: run `rag-ci questions generate`" in done.output


def test_the_target_is_guessed_from_the_repository_and_a_flat_folder_is_one_corpus(tmp_path):
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "faq.md").write_text("# FAQ\n\nAnswers.\n")
    (tmp_path / "app.py").write_text("from fastapi import FastAPI\napp = FastAPI()\n")
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])
    assert done.exit_code == 0, done.output
    config = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml")
    assert list(config.corpora) == ["knowledge"] and config.corpora["knowledge"].path == "knowledge"
    assert config.target.kind == "http"


def test_docs_names_the_folder_of_corpora(tmp_path):
    for corpus in ("hr", "it"):
        (tmp_path / "content" / "manuals" / corpus).mkdir(parents=True)
        (tmp_path / "content" / "manuals" / corpus / "a.txt").write_text("text\n")
    done = CliRunner().invoke(
        cli,
        [
            "init",
            str(tmp_path),
            "--yes",
            "--no-workflows",
            "--target",
            "command",
            "--docs",
            str(tmp_path / "content" / "manuals"),
        ],
    )
    assert done.exit_code == 0, done.output
    config = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml")
    assert {n: s.path for n, s in config.corpora.items()} == {
        "hr": "content/manuals/hr",
        "it": "content/manuals/it",
    }
    assert config.target.kind == "command"


def test_a_documents_folder_outside_the_project_is_refused(tmp_path):
    (tmp_path / "outside" / "a").mkdir(parents=True)
    (tmp_path / "outside" / "a" / "x.md").write_text("x\n")
    done = CliRunner().invoke(
        cli, ["init", str(tmp_path / "project"), "--yes", "--docs", str(tmp_path / "outside")]
    )
    assert (
        done.exit_code == 2
        and "is outside" in done.output
        and not (tmp_path / "project" / "rag-ci.yml").exists()
    )


def test_init_where_github_workflows_is_a_file_says_so_and_writes_nothing(tmp_path):
    _documents(tmp_path, "a", "b")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "workflows").write_text("not a folder\n")

    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes"])

    assert done.exit_code == 2, done.output
    assert ".github/workflows is a file" in done.output and "Traceback" not in done.output
    assert not (tmp_path / "rag-ci.yml").exists() and not (tmp_path / "questions.yml").exists()
    # nothing half-written
    assert CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"]).exit_code == 0


def test_init_names_odd_folders_as_they_are_and_never_twice(tmp_path):
    _documents(tmp_path, "null", "a b", "a-b", "true")

    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes", "--no-workflows"])

    assert done.exit_code == 0, done.output
    config = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml")
    assert {name: spec.path for name, spec in config.corpora.items()} == {
        "a-b": "docs/a b",
        "a-b-2": "docs/a-b",
        "null": "docs/null",
        "true": "docs/true",
    }


def test_init_never_follows_a_symlink_out_of_the_repository(tmp_path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    _documents(project, "a")
    (outside / "secret-docs").mkdir(parents=True)
    (outside / "secret-docs" / "x.md").write_text("# x\n\nprivate\n")
    (project / "docs" / "linked").symlink_to(outside / "secret-docs")
    (project / "questions.yml").symlink_to(outside / "created-by-init.yml")  # dangling

    refused = CliRunner().invoke(cli, ["init", str(project), "--yes", "--no-workflows"])

    assert refused.exit_code == 2 and "not overwriting: questions.yml" in refused.output, refused.output
    assert not (outside / "created-by-init.yml").exists()
    (project / "questions.yml").unlink()
    done = CliRunner().invoke(cli, ["init", str(project), "--yes", "--no-workflows"])
    assert done.exit_code == 0, done.output
    assert list(parse_config((project / "rag-ci.yml").read_text(), "rag-ci.yml").corpora) == ["a"]


def test_init_writes_no_second_pull_request_workflow_beside_one_that_runs_rag_ci(tmp_path):
    _documents(tmp_path, "a", "b")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "rag-ci.yml").write_text(
        "on: pull_request\njobs:\n  rag:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: rag-ci/rag-ci@v1\n"
    )

    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--yes"])

    assert done.exit_code == 0, done.output
    assert "not writing workflows: .github/workflows/rag-ci.yml already runs rag-ci" in done.output
    assert [p.name for p in (tmp_path / ".github" / "workflows").iterdir()] == ["rag-ci.yml"]
