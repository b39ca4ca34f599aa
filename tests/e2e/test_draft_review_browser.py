"""The draft review page in headless Chromium: a reviewer's edits and decisions become a
reviewed.yml that `rag-ci questions apply` merges; hostile passage text stays text.

Needs Chromium and Node; browser_setup.playwright_folder says how, and skips with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from browser_setup import playwright_folder
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli
from rag_ci.core.questionset.questions import parse_question_set

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).parent / "browser" / "review_drafts_page.js"
# In inline code: passages keep code as text (HTML outside code is no prose, and is cut), so the page must escape it.
HOSTILE = "The LED code `<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">` means 42 V on the bus."


def test_edits_and_decisions_on_the_review_page_are_applied_to_the_question_set(tmp_path):
    folder = playwright_folder()
    example = tmp_path / "ex"
    shutil.copytree(
        EXAMPLES, example, ignore=shutil.ignore_patterns("baseline", "out", ".index", "*.sqlite*", ".rag-ci*")
    )
    (example / "corpora" / "du3" / "docs" / "led-codes.md").write_text(
        f"# LED codes (DU-3)\n\n{HOSTILE} The remote blinks `</script><script>alert(1)</script>` twice for 3 seconds.\n"
    )
    config = str(example / "rag-ci.yml")
    made = CliRunner().invoke(
        cli,
        [
            "questions",
            "generate",
            "--config",
            config,
            "--writer",
            "fake",
            "--corpus",
            "du3",
            "--per-document",
            "1",
            "--no-progress",
        ],
    )
    assert made.exit_code == 0, made.output
    questions = parse_question_set(
        (example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
    )
    drafts = [q for q in questions.questions if q.status == "draft"]
    led = next(q for q in drafts if q.sources == ("du3/led-codes.md",))
    refusal = next(q for q in drafts if q.is_refusal)
    rejected = next(q for q in drafts if q not in (led, refusal))
    page = CliRunner().invoke(
        cli, ["questions", "review", "--config", config, "--out", str(tmp_path / "review")]
    )
    assert page.exit_code == 0 and f"{len(drafts)} drafts to review" in page.output

    plan = {
        led.id: {
            "decision": "approve",
            "question": "What does the DU-3 LED code mean?",
            "keywords": ["42 V", "not there"],
        },
        rejected.id: {"decision": "reject"},
        refusal.id: {"decision": "approve"},
    }
    out = tmp_path / "reviewed.yml"
    done = subprocess.run(
        ["node", str(SCRIPT), str(tmp_path / "review" / "review.html"), json.dumps(plan), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": str(folder / "node_modules")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["errors"] == [] and seen["pwned"] is None and seen["shown"] == len(drafts)
    assert all(url.startswith(("file://", "blob:")) for url in seen["requests"]), seen["requests"]
    # shown as text
    assert "onerror=" in seen["text"] and "</script><script>alert(1)</script>" in seen["text"]
    assert seen["progress"] == f"3 of {len(drafts)} decided" and seen["filename"] == "reviewed.yml"
    # the page checks keywords against the passage
    assert seen["checks"][led.id] == "not in the passage: not there"

    applied = CliRunner().invoke(cli, ["questions", "apply", str(out), "--config", config])
    assert applied.exit_code == 0, applied.output
    assert f"2 approved (1 edited), 1 rejected, {len(drafts) - 3} still drafts" in applied.output
    after = parse_question_set(
        (example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
    ).by_id()
    assert after[led.id].status is None and after[led.id].question == "What does the DU-3 LED code mean?"
    assert after[led.id].keywords == ("42 V", "not there") and after[led.id].provenance.reviewed_by == "ana"
    assert after[led.id].reference == led.reference and after[refusal.id].status is None
    assert rejected.id not in after


def test_a_reviewer_moves_a_draft_to_another_corpus_and_document_on_the_page_and_apply_writes_it(tmp_path):
    """doc_id is picked from the routing table and sources from the corpora's
    documents, both on the page; `questions apply` writes them into questions.yml."""
    folder = playwright_folder()
    example = tmp_path / "ex"
    shutil.copytree(
        EXAMPLES, example, ignore=shutil.ignore_patterns("baseline", "out", ".index", "*.sqlite*", ".rag-ci*")
    )
    config = str(example / "rag-ci.yml")
    made = CliRunner().invoke(
        cli,
        [
            "questions",
            "generate",
            "--config",
            config,
            "--writer",
            "fake",
            "--corpus",
            "du3",
            "--per-document",
            "1",
            "--no-progress",
        ],
    )
    assert made.exit_code == 0, made.output
    drafts = [
        q
        for q in parse_question_set(
            (example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
        ).questions
        if q.status == "draft"
    ]
    moved = next(q for q in drafts if q.doc_id == ("du3",) and not q.is_refusal)
    cross = next(q for q in drafts if q is not moved and q.doc_id == ("du3",) and not q.is_refusal)
    page = CliRunner().invoke(
        cli, ["questions", "review", "--config", config, "--out", str(tmp_path / "review")]
    )
    assert page.exit_code == 0, page.output

    plan = {
        moved.id: {"decision": "approve", "doc_id": ["du2"], "sources": ["du2/battery.md"]},
        cross.id: {
            "decision": "approve",
            "doc_id": ["du2", "du3"],
            "sources": [*cross.sources, "du2/overview.md"],
            "tags": [*cross.tags, "cross_corpus"],
        },
    }
    out = tmp_path / "reviewed.yml"
    done = subprocess.run(
        ["node", str(SCRIPT), str(tmp_path / "review" / "review.html"), json.dumps(plan), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": str(folder / "node_modules")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["errors"] == [] and seen["progress"] == f"2 of {len(drafts)} decided"
    # the ticked corpus's documents, cited as the set cites them
    assert "du3/battery.md" in seen["choices"] and "du2/battery.md" not in seen["choices"]
    exported = out.read_text()
    assert 'doc_id: ["du2"]' in exported and 'sources: ["du2/battery.md"]' in exported

    applied = CliRunner().invoke(cli, ["questions", "apply", str(out), "--config", config])
    assert applied.exit_code == 0, applied.output
    assert "2 approved (2 edited)" in applied.output
    after = parse_question_set(
        (example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
    ).by_id()
    assert (after[moved.id].doc_id, after[moved.id].sources, after[moved.id].status) == (
        ("du2",),
        ("du2/battery.md",),
        None,
    )
    assert after[cross.id].doc_id == ("du2", "du3") and after[cross.id].sources == tuple(
        sorted([*cross.sources, "du2/overview.md"])
    )
    assert after[cross.id].tags[-1] == "cross_corpus"
