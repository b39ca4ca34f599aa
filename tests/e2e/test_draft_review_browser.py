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
from click.testing import CliRunner

from browser_setup import playwright_folder
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
    shutil.copytree(EXAMPLES, example, ignore=shutil.ignore_patterns("baseline", "out", ".index", "*.sqlite*", ".rag-ci*"))
    (example / "corpora" / "du3" / "docs" / "led-codes.md").write_text(
        f"# LED codes (DU-3)\n\n{HOSTILE} The remote blinks `</script><script>alert(1)</script>` twice for 3 seconds.\n")
    config = str(example / "rag-ci.yml")
    made = CliRunner().invoke(cli, ["questions", "generate", "--config", config, "--writer", "fake", "--corpus", "du3",
                                    "--per-document", "1", "--no-progress"])
    assert made.exit_code == 0, made.output
    questions = parse_question_set((example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True)
    drafts = [q for q in questions.questions if q.status == "draft"]
    led = next(q for q in drafts if q.sources == ("du3/led-codes.md",))
    refusal = next(q for q in drafts if q.is_refusal)
    rejected = next(q for q in drafts if q not in (led, refusal))
    page = CliRunner().invoke(cli, ["questions", "review", "--config", config, "--out", str(tmp_path / "review")])
    assert page.exit_code == 0 and f"{len(drafts)} drafts to review" in page.output

    plan = {led.id: {"decision": "approve", "question": "What does the DU-3 LED code mean?", "keywords": ["42 V", "not there"]},
            rejected.id: {"decision": "reject"}, refusal.id: {"decision": "approve"}}
    out = tmp_path / "reviewed.yml"
    done = subprocess.run(["node", str(SCRIPT), str(tmp_path / "review" / "review.html"), json.dumps(plan), str(out)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NODE_PATH": str(folder / "node_modules")})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["errors"] == [] and seen["pwned"] is None and seen["shown"] == len(drafts)
    assert all(url.startswith(("file://", "blob:")) for url in seen["requests"]), seen["requests"]
    assert "onerror=" in seen["text"] and "</script><script>alert(1)</script>" in seen["text"]  # shown as text
    assert seen["progress"] == f"3 of {len(drafts)} decided" and seen["filename"] == "reviewed.yml"
    assert seen["checks"][led.id] == "not in the passage: not there"  # the page checks keywords against the passage

    applied = CliRunner().invoke(cli, ["questions", "apply", str(out), "--config", config])
    assert applied.exit_code == 0, applied.output
    assert f"2 approved (1 edited), 1 rejected, {len(drafts) - 3} still drafts" in applied.output
    after = parse_question_set((example / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True).by_id()
    assert after[led.id].status is None and after[led.id].question == "What does the DU-3 LED code mean?"
    assert after[led.id].keywords == ("42 V", "not there") and after[led.id].provenance.reviewed_by == "ana"
    assert after[led.id].reference == led.reference and after[refusal.id].status is None
    assert rejected.id not in after
