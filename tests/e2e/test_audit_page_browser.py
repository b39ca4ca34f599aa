"""The audit labelling page in headless Chromium: clicks become a labels.yml that calibrate reads.

Needs Chromium and Node; browser_setup.playwright_folder says how, and skips with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from browser_setup import playwright_folder

from builders import metric, question, run
from rag_ci.core.results import Context, JudgeFingerprint
from rag_ci.core.review.audit import draw_sample
from rag_ci.core.review.audit_page import render_audit_page
from rag_ci.core.review.calibration import calibrate, parse_label_sheet

SCRIPT = Path(__file__).parent / "browser" / "label_audit_page.js"
JUDGE = JudgeFingerprint(
    provider="openai",
    model="gpt-4o-mini-2024-07-18",
    temperature=0.0,
    deepeval_version="3",
    metrics={"correctness": {}, "completeness": {}},
    prompt_hash="p",
)
HOSTILE = '</script><script>window.alert("pwned")</script><img src=x onerror=alert(1)>'


def judged(qid, corpus, ok, answer="ok"):
    q = question(
        qid,
        "pass" if ok else "fail",
        corpora=(corpus,),
        answer=answer,
        metrics=[
            metric("correctness", 1.0 if ok else 0.0, threshold=1.0, kind="judge"),
            metric("completeness", 1.0, threshold=1.0, kind="judge"),
        ],
    )
    q.reference = f"reference of {qid}"
    q.contexts = [Context(text=f"passage of {qid} {HOSTILE}", source=f"{corpus}/x.md")]
    return q


def test_clicks_on_the_audit_page_save_a_labels_file_that_calibrate_reads(tmp_path):
    folder = playwright_folder()
    out_of_scope = judged("OOS", "du2", True, answer="That is not in the documents.")
    out_of_scope.reference, out_of_scope.expect = None, "refusal"
    head = run(
        judged("A1", "du2", True, answer=HOSTILE),
        judged("A2", "du2", True),
        judged("B1", "du3", False),
        judged("B2", "du3", True),
        out_of_scope,
        judge=JUDGE,
    )
    sample = draw_sample(head, 1.0, seed=0)
    page = tmp_path / "audit.html"
    page.write_text(render_audit_page(head, sample), encoding="utf-8")
    plan = {
        "A1": {"correct": True, "complete": False},
        "A2": {"correct": False, "complete": True},
        "B1": {"correct": False},
        "B2": {"correct": True, "complete": True},
        "OOS": {"correct": True},
    }
    out = tmp_path / "labels.yml"
    done = subprocess.run(
        ["node", str(SCRIPT), str(page), json.dumps(plan), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": str(folder / "node_modules")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["errors"] == [] and seen["shown"] == 5 and seen["filename"] == "labels.yml"
    assert all(url.startswith(("file://", "blob:")) for url in seen["requests"]), seen["requests"]
    assert HOSTILE in seen["text"]  # shown as text, not run as markup
    assert seen["progress"] == "4 of 5 labelled"  # B1 has no `complete` yet; OOS has no `complete` to give
    oos = seen["items"]["OOS"]
    assert "a refusal: the question is out of scope" in oos and "REFERENCE" not in oos.upper().replace(
        "EXPECTED", ""
    )
    # today: "REFERENCE —" and complete/incomplete buttons
    assert "refused, correctly" in oos and "incomplete" not in oos
    sheet = parse_label_sheet(out.read_text(encoding="utf-8"), "labels.yml")
    assert sheet.labels == {
        "correctness": {"A1": True, "A2": False, "B1": False, "B2": True, "OOS": True},
        "completeness": {"A1": False, "A2": True, "B2": True},
    }
    assert sheet.labellers == ("ana",) and sheet.judge_digest == JUDGE.digest()
    report = calibrate(sheet.labels["correctness"], head)
    assert [d.id for d in report.disagreements] == ["A2"]
