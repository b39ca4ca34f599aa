"""The verbs that read, change and write the question set take turns: two at once both keep
their change (real processes racing on one questions.yml), and the file keeps its line endings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.core.questionset.questions import parse_question_set

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
CONFIG = """\
questions: questions.yml
corpora:
  du2: {description: DU-2 manual, path: docs/du2}
target: {kind: command, command: ["python", "rag.py"]}
"""


def draft(n: int) -> str:
    return f"""\
  - id: D-{n:02d}
    question: How long does charger {n} take?
    reference: Charger {n} takes {n} hours.
    doc_id: du2
    sources: [du2/battery.md]
    status: draft
    provenance: {{writer: fake, date: '2026-05-01'}}
"""


def project(tmp_path: Path, drafts: int, newline: str = "\n") -> Path:
    (tmp_path / "docs" / "du2").mkdir(parents=True, exist_ok=True)
    (tmp_path / "docs" / "du2" / "battery.md").write_text("# Battery\n\nCharger 1 takes 1 hours.\n")
    text = "version: 1\nquestions:\n" + "".join(draft(n) for n in range(drafts))
    (tmp_path / "questions.yml").write_bytes(text.replace("\n", newline).encode())
    (tmp_path / "rag-ci.yml").write_text(CONFIG)
    return tmp_path / "rag-ci.yml"


def statuses(tmp_path: Path) -> dict[str, str | None]:
    questions = parse_question_set((tmp_path / "questions.yml").read_text(), "q", {"du2"}, allow_drafts=True)
    return {q.id: q.status for q in questions.questions}


def test_two_approves_at_once_both_keep_their_approval(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for trial in range(6):
        folder = tmp_path / f"trial{trial}"
        config = project(folder, drafts=4)
        racers = [
            subprocess.Popen(
                [sys.executable, "-m", "rag_ci", "questions", "approve", qid, "--config", str(config)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for qid in ("D-00", "D-01", "D-02")
        ]
        outputs = [r.communicate(timeout=120)[0] for r in racers]
        assert [r.returncode for r in racers] == [0, 0, 0], outputs
        assert statuses(folder) == {"D-00": None, "D-01": None, "D-02": None, "D-03": "draft"}, (
            trial,
            outputs,
        )
        assert not (folder / "questions.yml.lock").exists()


def test_approving_a_draft_keeps_the_files_crlf_line_endings(tmp_path):
    config = project(tmp_path, drafts=2, newline="\r\n")

    done = CliRunner().invoke(
        cli, ["questions", "approve", "D-00", "--config", str(config)], catch_exceptions=False
    )

    assert done.exit_code == 0, done.output
    raw = (tmp_path / "questions.yml").read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") > 10
    assert statuses(tmp_path) == {"D-00": None, "D-01": "draft"}
