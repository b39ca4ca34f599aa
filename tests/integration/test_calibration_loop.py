"""The whole calibration loop through the CLI, with a real (fake-server) judge:
run → audit sample → labels written as a human would → calibrate --record → the next
PR comment states the calibration."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from fakes.judge_setup import JUDGE_MODELS
from rag_ci.cli import cli

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PYTHON_TARGET = (
    f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}'], generator_family: tiny}}\n"
)
QUESTIONS = "version: 1\nquestions:\n" + "".join(
    f"  - {{id: {c.upper()}{i}, question: What is the delay on {c}{i}?, reference: The delay is {i} ms., doc_id: {c}, sources: [{c}/x.md]}}\n"
    for c in "ab"
    for i in range(1, 7)
)


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def fill_in_like_a_human(sheet: str, verdicts: dict[str, bool]) -> str:
    """Type true/false after each blank `correct:` of the sheet, keeping its comments."""
    out, current = [], None
    for line in sheet.splitlines():
        match = re.match(r'\s+- id: "(.+)"', line)
        if match:
            current = match.group(1)
        if line.strip().startswith("correct:") and current in verdicts:
            line = line.replace("correct:", f"correct: {str(verdicts[current]).lower()}", 1)
        out.append(line)
    return "\n".join(out).replace('labeller: ""', 'labeller: "ana"') + "\n"


def test_sample_label_calibrate_record_and_the_next_comment_states_it(tiny_project, tmp_path, fake_judge):
    server = fake_judge("openai")
    config = tiny_project(
        PYTHON_TARGET,
        QUESTIONS,
        textwrap.dedent(f"""
        judge: {{provider: openai, model: {JUDGE_MODELS["openai"]}, base_url: '{server.base_url}', max_retries: 0, backoff_s: 0.01}}
        metrics: {{hit_at_k: {{k: 5}}, correctness: {{}}}}
        """),
    )
    env = {"OPENAI_API_KEY": "sk-fake"}
    results = tmp_path / "results.json"
    assert invoke("run", "--config", config, "-o", results, "--no-progress", env=env).exit_code == 0
    history = tmp_path / "eval_history.jsonl"
    history.write_text("")

    before = invoke("compare", results, results, "--history", history)
    assert "⚠️ correctness judge not calibrated" in before.output

    sampled = invoke(
        "audit", "sample", results, "--fraction", "0.5", "--out", tmp_path / "audit", "--seed", "3"
    )
    assert sampled.exit_code == 0, sampled.output
    sheet = (tmp_path / "audit" / "labels.yml").read_text()
    ids = re.findall(r'- id: "(.+)"', sheet)
    assert len(ids) >= 6
    judge_says = {
        q["id"]: q["metrics"]["correctness"]["passed"] for q in json.loads(results.read_text())["questions"]
    }
    # The human agrees with the judge except on one answer.
    human = {qid: judge_says[qid] for qid in ids}
    human[ids[0]] = not human[ids[0]]
    labels = tmp_path / "labels.yml"
    labels.write_text(fill_in_like_a_human(sheet, human))

    calibrated = invoke("calibrate", labels, results, "--record", "--history", history)
    assert calibrated.exit_code == 0, calibrated.output
    assert "Disagreements (1)" in calibrated.output and ids[0] in calibrated.output
    record = json.loads(history.read_text().splitlines()[-1])
    assert (record["n"], record["labellers"], record["metric"]) == (len(ids), 1, "correctness")

    after = invoke("compare", results, results, "--history", history)
    today = datetime.now(UTC).date().isoformat()
    kappa = f"{record['kappa']:.2f}" if record["kappa"] is not None else "n/a"
    line = f"correctness judge calibrated on {len(ids)} labels, kappa {kappa} ({today})"
    assert line in after.output, after.output
    html = invoke("report", results, "--format", "html", "--history", history)
    assert line in html.output
