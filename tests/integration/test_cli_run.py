"""The CLI end to end on a tiny project: run, compare, report, validate, resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from drive import kill_processes, processes_running
from rag_ci.cli import cli

FAKES = Path(__file__).resolve().parents[1] / "fakes"
COMMAND_TARGET = f"""
target:
  kind: command
  command: [python, {FAKES / "tiny_rag.py"}]
  pass_env: ["TINY_RAG_*"]   # the fake's switches (the target's environment is an allow-list)
  timeout_s: 2
"""
PYTHON_TARGET = f"""
target:
  kind: python
  entry: tiny_rag:answer
  path: [{FAKES}]
"""


def invoke(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def test_validate_reports_counts(tiny_project):
    result = invoke("validate", "--config", tiny_project(COMMAND_TARGET))
    assert result.exit_code == 0
    assert (
        "4 questions" in result.output
        and "1 cross-corpus" in result.output
        and "1 out-of-scope" in result.output
    )


def test_validate_error_exits_2_with_file_and_line(tiny_project, tmp_path):
    config = tiny_project(
        COMMAND_TARGET, "version: 1\nquestions:\n  - id: A\n    question: q\n    doc_id: nope\n"
    )
    result = invoke("validate", "--config", config)
    assert result.exit_code == 2
    assert (
        f"{tmp_path / 'questions.yml'}:5: question A: unknown doc_id 'nope' (corpora: a, b)" in result.output
    )


def test_missing_config_exits_2(tmp_path):
    result = invoke("validate", "--config", tmp_path / "nope.yml")
    assert result.exit_code == 2 and "config not found" in result.output


def test_run_writes_results_and_compare_finds_the_regression(tiny_project, tmp_path):
    config = tiny_project(COMMAND_TARGET)
    first = invoke("run", "--config", config, "-o", tmp_path / "base.json", "--no-progress")
    assert first.exit_code == 0
    # the report
    assert (
        "## rag-ci: 🟡 no baseline to compare with" in first.output and "4/4 questions pass" in first.output
    )
    base = json.loads((tmp_path / "base.json").read_text())
    assert [q["verdict"] for q in base["questions"]] == ["pass", "pass", "pass", "pass"]
    assert base["meta"]["question_set_version"] == 1 and base["meta"]["generator_models"] == ["tiny-1"]
    assert base["aggregates"]["per_corpus"]["a"]["n"] == 3  # Q1, Q3 and the refusal question

    result = invoke(
        "run",
        "--config",
        config,
        "-o",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--format",
        "json",
        "--no-progress",
        env={"TINY_RAG_BROKEN": "1"},
    )
    assert result.exit_code == 1
    report = json.loads(result.output[result.output.index("{") :])
    assert [r["id"] for r in report["regressions"]] == ["Q2"]
    assert {m["name"] for m in report["regressions"][0]["metrics"]} >= {"hit_at_k", "keyword_coverage"}

    assert invoke("compare", tmp_path / "base.json", tmp_path / "base.json").exit_code == 0
    md = invoke("compare", tmp_path / "base.json", tmp_path / "head.json")
    assert md.exit_code == 1 and "❌ 1 regression" in md.output
    html = invoke(
        "report",
        tmp_path / "head.json",
        "--baseline",
        tmp_path / "base.json",
        "--format",
        "html",
        "-o",
        tmp_path / "r.html",
    )
    assert html.exit_code == 1 and "<svg" in (tmp_path / "r.html").read_text()  # exits like compare (--help)


def test_compare_with_missing_or_corrupt_baseline_exits_2(tmp_path):
    (tmp_path / "bad.json").write_text("{oops")
    assert invoke("compare", tmp_path / "none.json", tmp_path / "bad.json").exit_code == 2
    result = invoke("compare", tmp_path / "bad.json", tmp_path / "bad.json")
    assert result.exit_code == 2 and "not valid JSON" in result.output


QUESTIONS_WITH_FAILURES = """
version: 1
questions:
  - {id: OK, question: What is the delay?, doc_id: a, sources: [a/x.md]}
  - {id: LEAK, question: leak please, doc_id: a, sources: [a/x.md]}
  - {id: CRASH, question: crash now, doc_id: a}
  - {id: SLOW, question: sleep forever, doc_id: a}
  - {id: JUNK, question: garbage out, doc_id: a}
  - {id: AFTER, question: What is the delay on b?, doc_id: b, sources: [b/y.md]}
"""


def test_failing_questions_never_stop_the_run(tiny_project, tmp_path):
    # Half the questions error on purpose: allow that share (the default would call it a broken run).
    config = tiny_project(
        COMMAND_TARGET, QUESTIONS_WITH_FAILURES, "  concurrency: 1\ngate: {max_error_rate: 0.5}\n"
    )
    result = invoke("run", "--config", config, "-o", tmp_path / "r.json", "--no-progress")
    assert result.exit_code == 1  # the run completes; its routing leak gates (with or without a baseline)
    records = {q["id"]: q for q in json.loads((tmp_path / "r.json").read_text())["questions"]}
    assert {k: v["verdict"] for k, v in records.items()} == {
        "OK": "pass",
        "LEAK": "routing_error",
        "CRASH": "error",
        "SLOW": "error",
        "JUNK": "error",
        "AFTER": "pass",
    }
    assert records["LEAK"]["leaks"] == ["zzz"] and records["LEAK"]["metrics"] == {}
    assert "time-out" in records["SLOW"]["error"] and "not a JSON line" in records["JUNK"]["error"]
    diagnostics = json.loads((tmp_path / "r.json").read_text())["meta"]["diagnostics"]
    assert "crashing on purpose" in diagnostics


def test_python_target_runs_in_a_worker_process(tiny_project, tmp_path):
    result = invoke(
        "run", "--config", tiny_project(PYTHON_TARGET), "-o", tmp_path / "r.json", "--no-progress"
    )
    assert result.exit_code == 0
    assert json.loads((tmp_path / "r.json").read_text())["aggregates"]["overall"]["passed"] == 4


def test_failing_build_step_exits_2_with_its_output(tiny_project, tmp_path):
    config = tiny_project(COMMAND_TARGET + "  build: ['echo compiling; exit 7']\n")
    result = invoke("run", "--config", config, "-o", tmp_path / "r.json", "--no-progress")
    assert (
        result.exit_code == 2
        and "build step failed (exit 7)" in result.output
        and "compiling" in result.output
    )


def test_killed_run_resumes_without_asking_finished_questions_again(tiny_project, tmp_path):
    many = "version: 1\nquestions:\n" + "".join(
        f"  - {{id: Q{i:02d}, question: What is the delay?, doc_id: a}}\n" for i in range(20)
    )
    # The first run stalls after 8 answers (a warm-up and 7 questions) until it is killed: a
    # run caught mid-way however slowly this test watches it (a 600 s time-out never ends it).
    config = tiny_project(
        COMMAND_TARGET.replace("timeout_s: 2", "timeout_s: 600") + "  concurrency: 1\n", many
    )
    log, output = tmp_path / "asked.log", tmp_path / "r.json"
    env = {**os.environ, "TINY_RAG_LOG": str(log)}
    run = [
        sys.executable,
        "-m",
        "rag_ci.cli",
        "run",
        "--config",
        str(config),
        "-o",
        str(output),
        "--no-progress",
    ]
    process = subprocess.Popen(
        run, env={**env, "TINY_RAG_STALL_AFTER": "8"}, stderr=subprocess.DEVNULL, start_new_session=True
    )
    journal = tmp_path / "r.json.partial.jsonl"
    deadline = time.monotonic() + 120  # a hang guard only
    while time.monotonic() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 8):
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not output.exists()
    finished = len(journal.read_text().splitlines()) - 1
    assert finished == 7

    log.write_text("")
    resumed = subprocess.run(run + ["--resume"], env=env, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resume: {finished} questions already done" in resumed.stderr
    asked = log.read_text().split()
    asked_again = [i for i in asked if i.startswith("Q")]
    assert len(asked_again) == 20 - finished
    assert asked[0] == "rag-ci-warmup-1"  # the resumed run warms its fresh target up first (not a question)
    result = json.loads(output.read_text())
    assert [q["id"] for q in result["questions"]] == [f"Q{i:02d}" for i in range(20)]
    assert not journal.exists()


# Answers five requests, then stalls: the run is still going when the test stops it, however
# slowly the test watches it.
SLOW_HTTP_RAG = """
import http.server, itertools, json, sys, time
posts = itertools.count()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self): self.send_response(200); self.end_headers()
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if next(posts) >= 5:
            time.sleep(3600)
        body = json.dumps({"answer": "10 ms", "contexts": [{"text": "t", "doc_id": "a", "source": "a/x.md"}]}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_sigterm_from_a_cancelled_job_stops_the_target_server(tiny_project, tmp_path):
    import socket

    rag = tmp_path / "cancelled_rag.py"
    rag.write_text(SLOW_HTTP_RAG)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    many = "version: 1\nquestions:\n" + "".join(
        f"  - {{id: Q{i:02d}, question: What is the delay?, doc_id: a}}\n" for i in range(30)
    )
    config = tiny_project(
        f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/query\n  health: /health\n  start: [python, {rag}, '{port}']\n  concurrency: 1\n",
        many,
    )
    journal = tmp_path / "r.json.partial.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rag_ci.cli",
            "run",
            "--config",
            str(config),
            "-o",
            str(tmp_path / "r.json"),
            "--no-progress",
        ],
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120  # hang guards only, here and below
    while time.monotonic() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 3):
        time.sleep(0.05)
    assert processes_running(str(rag)), "the target server should be running mid-run"
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and processes_running(str(rag)):
        time.sleep(0.05)
    leftovers = processes_running(str(rag))
    kill_processes(str(rag))  # what a failed run left
    assert leftovers == []
    assert journal.exists()  # the interrupted run can be resumed


def test_results_and_the_html_report_honour_the_umask(tiny_project, tmp_path):
    # Before: 0600 whatever the umask: a CI's artifact upload as another user failed.
    config = tiny_project(COMMAND_TARGET)
    results, html = tmp_path / "out" / "results.json", tmp_path / "out" / "report.html"
    cli = [sys.executable, "-m", "rag_ci.cli"]
    for command in (
        ["run", "--config", str(config), "-o", str(results), "--no-progress"],
        ["report", str(results), "--format", "html", "-o", str(html)],
    ):
        done = subprocess.run(
            [*cli, *command], capture_output=True, text=True, timeout=120, umask=0o022, env=os.environ.copy()
        )
        assert done.returncode == 0, done.stderr
    assert {p.name: p.stat().st_mode & 0o777 for p in (results, html)} == {
        "results.json": 0o644,
        "report.html": 0o644,
    }


def test_a_command_targets_latency_ends_when_its_reply_arrives_not_after_the_second_line_check(
    tiny_project, tmp_path, monkeypatch
):
    # rag-ci waits a while after each reply for a second line (a reply written twice); that wait
    # is its own check, not the RAG's latency: counting it made every command target look slower
    # than its baseline the first time rag-ci was upgraded (a false latency-budget breach).
    import rag_ci.targets.command as command

    # far above the fake's round trip, even on a busy machine (milliseconds; a few hundred at
    # worst): a latency that counted the wait would be at least this long, one that did not is
    # far below it
    monkeypatch.setattr(command, "SETTLE_S", 2.0)
    config = tiny_project(COMMAND_TARGET + "  concurrency: 1\n")
    assert invoke("run", "--config", config, "-o", tmp_path / "r.json", "--no-progress").exit_code == 0
    latencies = [q["latency_s"] for q in json.loads((tmp_path / "r.json").read_text())["questions"]]
    assert latencies and max(latencies) < command.SETTLE_S, latencies


def test_run_without_a_baseline_exits_1_on_a_routing_leak(tmp_path):
    """Before: a run whose every question leaked exited 0 without --baseline."""
    (tmp_path / "rag-ci.yml").write_text(
        "questions: q.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}']}}\n"
        "judge: {provider: none}\nmetrics: {keyword_coverage: {}}\n"
    )
    (tmp_path / "q.yml").write_text(
        "version: 1\nquestions:\n  - {id: L1, question: leak one, doc_id: a}\n"
        "  - {id: L2, question: leak two, doc_id: b}\n"
    )
    result = invoke("run", "--config", tmp_path / "rag-ci.yml", "-o", tmp_path / "r.json", "--no-progress")
    assert result.exit_code == 1, result.output
    assert "2 routing leaks" in result.output
