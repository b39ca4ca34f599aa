"""The CLI and the gate: broken runs exit 2 (never 1, never a baseline); `run --baseline` carries verdicts."""

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from fakes.judge_setup import JUDGE_MODELS
from rag_ci.cli import cli

FAKES = Path(__file__).resolve().parents[1] / "fakes"
PYTHON_TARGET = (
    f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}'], generator_family: tiny}}\n"
)
MOSTLY_CRASHING = """
version: 1
questions:
  - {id: OK, question: What is the delay?, doc_id: a, sources: [a/x.md]}
  - {id: C1, question: crash one, doc_id: a}
  - {id: C2, question: crash two, doc_id: a}
  - {id: C3, question: crash three, doc_id: b}
"""

WITH_REFERENCES = """
version: 1
questions:
  - {id: Q1, question: What is the delay on CAN?, reference: The delay is 10 ms on CAN., doc_id: a, sources: [a/x.md]}
  - {id: Q2, question: What is the delay on LIN?, reference: The delay is 20 ms on LIN., doc_id: b, sources: [b/y.md]}
  - {id: OOS, question: Who is the CEO?, expect: refusal}
"""


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def test_a_run_where_most_questions_error_exits_2_and_cannot_be_a_baseline(tiny_project, tmp_path):
    config = tiny_project(PYTHON_TARGET, MOSTLY_CRASHING)
    result = invoke("run", "--config", config, "-o", tmp_path / "broken.json", "--no-progress")

    assert result.exit_code == 2
    assert (
        "this run is broken, not a result: 3/4 questions errored (75%, above gate.max_error_rate 20%)"
        in result.output
    )
    assert "most common error" in result.output and "boom" in result.output
    written = json.loads((tmp_path / "broken.json").read_text())  # kept for diagnosis...
    assert written["meta"]["broken"].startswith("3/4 questions errored")
    # ...but never compared with, whichever side it is on.
    good = tiny_project(PYTHON_TARGET)
    assert invoke("run", "--config", good, "-o", tmp_path / "good.json", "--no-progress").exit_code == 0
    refused = invoke("compare", tmp_path / "broken.json", tmp_path / "good.json")
    assert refused.exit_code == 2 and "is a broken run, not a result" in refused.output
    assert invoke("compare", tmp_path / "good.json", tmp_path / "broken.json").exit_code == 2
    against = invoke(
        "run",
        "--config",
        good,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "broken.json",
        "--no-progress",
    )
    assert against.exit_code == 2 and "is a broken run" in against.output


def test_a_judge_outage_is_unusable_input_exit_2_not_regressions(tiny_project, tmp_path, fake_judge):
    server = fake_judge("openai")
    judge = textwrap.dedent(f"""
        judge: {{provider: openai, model: {JUDGE_MODELS["openai"]}, base_url: '{server.base_url}', max_retries: 0, backoff_s: 0.01}}
        metrics: {{hit_at_k: {{k: 5}}, correctness: {{}}}}
        """)
    config = tiny_project(PYTHON_TARGET, WITH_REFERENCES, judge)
    env = {"OPENAI_API_KEY": "sk-fake"}
    assert (
        invoke("run", "--config", config, "-o", tmp_path / "base.json", "--no-progress", env=env).exit_code
        == 0
    )
    assert any(q["verdict"] == "pass" for q in json.loads((tmp_path / "base.json").read_text())["questions"])

    server.queue_faults(*["500"] * 100)  # the judge is down: every judge metric errors
    result = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--full",
        "--no-progress",
        env=env,
    )

    assert result.exit_code == 2, result.output
    assert "3/3 questions errored" in result.output and "HTTP 500" in result.output
    assert "regression" not in result.output


OUTAGE_RAG = """
import os
import tiny_rag

def answer(request):
    if request["id"] in os.environ.get("OUTAGE_IDS", "").split(","):
        raise RuntimeError("upstream unavailable")
    return tiny_rag.answer(request)
"""
FIVE_QUESTIONS = """
version: 1
questions:
  - {id: A1, question: What is the delay?, doc_id: a, sources: [a/x.md]}
  - {id: B1, question: What is the delay on b?, doc_id: b, sources: [b/y.md]}
  - {id: A2, question: Delay again?, doc_id: a, sources: [a/x.md]}
  - {id: A3, question: Delay once more?, doc_id: a, sources: [a/x.md]}
  - {id: A4, question: And the delay?, doc_id: a, sources: [a/x.md]}
"""


def test_an_outage_on_main_does_not_exempt_a_question_from_the_gate(tiny_project, tmp_path):
    (tmp_path / "outage_rag.py").write_text(OUTAGE_RAG)
    target = f"target: {{kind: python, entry: 'outage_rag:answer', path: ['.', '{FAKES}'], pass_env: [OUTAGE_IDS, TINY_RAG_BROKEN]}}\n"
    config = tiny_project(target, FIVE_QUESTIONS)
    main_1, main_2 = tmp_path / "main-1.json", tmp_path / "main-2.json"
    assert invoke("run", "--config", config, "-o", main_1, "--no-progress").exit_code == 0
    # The next run on main errors on B1 (1/5: not a broken run); it carries B1's verdict forward.
    outage = invoke(
        "run",
        "--config",
        config,
        "-o",
        main_2,
        "--baseline",
        main_1,
        "--no-progress",
        env={"OUTAGE_IDS": "B1"},
    )
    assert outage.exit_code == 1  # against main-1, B1 pass → error is a regression
    b1 = {q["id"]: q for q in json.loads(main_2.read_text())["questions"]}["B1"]
    assert b1["verdict"] == "error" and b1["carried"]["verdict"] == "pass"

    # A pull request that breaks B1 is compared with that carried verdict.
    pr = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "pr.json",
        "--baseline",
        main_2,
        "--format",
        "json",
        "--no-progress",
        env={"TINY_RAG_BROKEN": "1"},
    )
    assert pr.exit_code == 1
    report = json.loads(pr.output[pr.output.index("{") :])
    assert [r["id"] for r in report["regressions"]] == ["B1"] and report["regressions"][0][
        "baseline_carried"
    ] is True
    assert [c["id"] for c in report["carried"]] == ["B1"]


def fake_judged(path: Path) -> Path:
    """A results.json judged by the fake judge (`--judge fake`), as a dry run writes it."""
    from builders import question, run
    from rag_ci.core.results import JudgeFingerprint
    from rag_ci.files.results_file import save_results

    judge = JudgeFingerprint(
        provider="fake",
        model="rag-ci-fake-judge-1",
        temperature=0.0,
        deepeval_version="4.3.1",
        metrics={},
        prompt_hash="p",
    )
    save_results(path, run(question("Q1"), judge=judge))
    return path


def test_a_fake_judge_run_is_refused_as_the_baseline_of_compare_run_and_report(tiny_project, tmp_path):
    baseline = fake_judged(tmp_path / "dry-run.json")
    config = tiny_project(PYTHON_TARGET)
    assert invoke("run", "--config", config, "-o", tmp_path / "good.json", "--no-progress").exit_code == 0

    for args in (
        ["compare", baseline, tmp_path / "good.json"],
        ["report", tmp_path / "good.json", "--baseline", baseline],
    ):
        refused = invoke(*args)
        assert refused.exit_code == 2 and "judged by the fake judge" in refused.output, args

    refused = invoke(
        "run", "--config", config, "-o", tmp_path / "head.json", "--baseline", baseline, "--no-progress"
    )
    assert refused.exit_code == 2 and "judged by the fake judge" in refused.output
    assert not (tmp_path / "head.json").exists()  # refused before any question was asked
