"""The target's circuit breaker: a RAG that stops answering ends the run in
seconds, with exit 2, naming the target and its last error, and nothing is re-asked.

The RAG is tests/fakes/outage_rag.py, a real HTTP server whose backend "goes down"
(every POST hangs, or fails with HTTP 500, from the start or after N answers); every POST
it receives is logged, so the tests count asks and re-asks.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import free_port, write
from rag_ci.cli import cli

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def _questions(n: int) -> str:
    lines = ["version: 1", "questions:"]
    for i in range(n):
        corpus = "ab"[i % 2]
        lines += [
            f"  - id: Q{i:02d}",
            f"    question: What is the delay, question {i}?",
            f"    doc_id: {corpus}",
            f"    sources: [{corpus}/{'x' if corpus == 'a' else 'y'}.md]",
        ]
    return "\n".join(lines) + "\n"


def _project(tmp_path: Path, n: int, target: str) -> Path:
    write(tmp_path / "questions.yml", _questions(n))
    return write(
        tmp_path / "rag-ci.yml",
        "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        "metrics: {hit_at_k: {k: 5}}\n" + target,
    )


def _http_target(port: int, extra: str = "") -> str:
    return (
        f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/query\n  health: /health\n"
        f"  start: [{sys.executable}, {FAKES / 'outage_rag.py'}, '{port}']\n"
        f"  pass_env: [OUTAGE_RAG, OUTAGE_RAG_LOG]\n{extra}"
    )


def _run(config: Path, output: Path, *, env: dict[str, str], baseline: Path | None = None, extra: tuple = ()):
    args = ["run", "--config", str(config), "-o", str(output), "--no-progress", *extra]
    if baseline is not None:
        args += ["--baseline", str(baseline)]
    return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)


def _asked(log: Path) -> Counter:
    return Counter(log.read_text().split()) if log.exists() else Counter()


def test_a_target_that_stops_answering_ends_a_60_question_run_in_seconds_with_exit_2_and_no_reasks(tmp_path):
    """The issue's "done when": timeout_s 3, 60 questions, every call hangs. Before the
    breaker: 60 time-outs at concurrency 8, plus three re-asks of each (all passed on the
    baseline) — about 90 s; now about 9 s (three time-outs' worth). Counted, not timed: a
    few rounds of eight calls are asked before the breaker trips, the rest never are."""
    port = free_port()
    config = _project(tmp_path, 60, _http_target(port, "  timeout_s: 3\n"))
    log = tmp_path / "asked.log"
    base = _run(config, tmp_path / "base.json", env={"OUTAGE_RAG": "ok"})
    assert base.exit_code == 0, base.output

    result = _run(
        config,
        tmp_path / "head.json",
        baseline=tmp_path / "base.json",
        env={"OUTAGE_RAG": "hang", "OUTAGE_RAG_LOG": str(log)},
    )

    assert result.exit_code == 2, result.output
    assert f"target http http://127.0.0.1:{port}/query stopped answering" in result.output
    # rag-ci's time-out, or the HTTP client's own (the same timeout_s), whichever fired first.
    assert re.search(r"last error: (time-out: no answer|target did not answer) within 3s", result.output)
    asked = _asked(log)
    questions = [i for i in asked if i.startswith("Q")]
    assert max(asked[i] for i in questions) == 1, "a question was re-asked while the target was down"
    head = json.loads((tmp_path / "head.json").read_text())
    assert head["meta"]["broken"].startswith(f"target http http://127.0.0.1:{port}/query stopped answering")
    assert {q["verdict"] for q in head["questions"]} == {"error"}
    errors = Counter(q["error"].split(":")[0] for q in head["questions"])
    # Asked and timed out, cut short by the trip (sent as the breaker tripped), or never sent.
    assert set(errors) <= {
        "time-out",
        "target did not answer within 3s",
        "cut short, the run stopped asking",
        "not asked",
    }
    assert (
        errors["time-out"] + errors["target did not answer within 3s"] <= len(questions)
        and errors["not asked"] > 30
    )
    assert not any(q.get("reasked") for q in head["questions"])


def test_a_target_failing_at_once_trips_after_the_first_questions_not_after_every_one(tmp_path):
    """HTTP 500 in a millisecond: no time-out to wait for, so the first K failures decide."""
    port = free_port()
    config = _project(tmp_path, 60, _http_target(port, "  concurrency: 2\n  max_errors_at_start: 6\n"))
    log = tmp_path / "asked.log"
    result = _run(config, tmp_path / "head.json", env={"OUTAGE_RAG": "error", "OUTAGE_RAG_LOG": str(log)})
    assert result.exit_code == 2, result.output
    assert "the first 6 questions all failed (target.max_errors_at_start: 6)" in result.output
    assert "last error: target answered HTTP 500" in result.output and "LLM API unreachable" in result.output
    # Two calls in flight when the sixth failure came back, at most (the two warm-ups aside).
    assert sum(n for i, n in _asked(log).items() if i.startswith("Q")) <= 6 + 2


def test_a_target_that_dies_mid_run_keeps_the_answers_it_gave_and_the_run_is_broken(tmp_path):
    port = free_port()
    config = _project(tmp_path, 40, _http_target(port, "  timeout_s: 1\n  concurrency: 2\n  max_wait_s: 2\n"))
    log = tmp_path / "asked.log"
    result = _run(config, tmp_path / "head.json", env={"OUTAGE_RAG": "after=10", "OUTAGE_RAG_LOG": str(log)})
    assert result.exit_code == 2, result.output
    assert "no successful reply for 2.0 s (target.max_wait_s: 2)" in result.output
    head = json.loads((tmp_path / "head.json").read_text())
    verdicts = Counter(q["verdict"] for q in head["questions"])
    warmup = sum(1 for i in _asked(log) if not i.startswith("Q"))
    assert verdicts["pass"] == 10 - warmup and verdicts["error"] == 40 - verdicts["pass"]
    assert head["meta"]["broken"].endswith(
        "questions not asked (docs/targets.md#when-the-target-stops-answering)"
    )


def test_a_hanging_command_target_is_not_restarted_once_the_run_is_broken(tmp_path):
    """A command process that does not answer is killed and restarted for the next question;
    once the breaker trips, nothing is asked, so nothing is restarted either."""
    starts = tmp_path / "starts.log"
    script = write(
        tmp_path / "hang.py",
        f"""
        import sys, time
        open({str(starts)!r}, "a").write("start\\n")
        for line in sys.stdin:
            time.sleep(3600)
    """,
    )
    config = _project(
        tmp_path,
        30,
        f"target:\n  kind: command\n  command: [{sys.executable}, {script}]\n"
        "  timeout_s: 1\n  max_wait_s: 2\n",
    )
    result = _run(config, tmp_path / "head.json", env={})
    assert result.exit_code == 2, result.output
    # One start, then one restart per question asked after a time-out: about max_wait_s / timeout_s.
    assert len(starts.read_text().split()) <= 4
    head = json.loads((tmp_path / "head.json").read_text())
    assert sum(q["error"].startswith("not asked") for q in head["questions"]) >= 26


def test_warm_ups_that_hang_never_trip_the_breaker_the_first_question_decides(tmp_path):
    """Before: unscored warm-ups that hang tripped the breaker, and a healthy target was never asked (exit 2)."""
    port = free_port()
    config = _project(tmp_path, 4, _http_target(port, "  concurrency: 1\n  warmup: 4\n  timeout_s: 1\n"))
    log = tmp_path / "asked.log"
    result = _run(
        config, tmp_path / "head.json", env={"OUTAGE_RAG": "hang=rag-ci-warmup-", "OUTAGE_RAG_LOG": str(log)}
    )
    assert result.exit_code == 0, result.output
    verdicts = {q["id"]: q["verdict"] for q in json.loads((tmp_path / "head.json").read_text())["questions"]}
    assert set(verdicts.values()) == {"pass"}
    assert sum(n for i, n in _asked(log).items() if not i.startswith("Q")) == 1  # the others were skipped
    assert "warm-up" in result.output and "skipped" in result.output


def test_two_slow_first_calls_on_a_small_set_are_re_asked_not_a_broken_run(tmp_path):
    """Before: two slow first calls on a 4-question set made the run "broken" (50 % > 20 %)."""
    port = free_port()
    config = _project(tmp_path, 4, _http_target(port, "  concurrency: 2\n  warmup: 0\n  timeout_s: 1\n"))
    log = tmp_path / "asked.log"
    result = _run(config, tmp_path / "head.json", env={"OUTAGE_RAG": "first=2", "OUTAGE_RAG_LOG": str(log)})
    assert result.exit_code == 0, result.output
    records = json.loads((tmp_path / "head.json").read_text())["questions"]
    assert {q["verdict"] for q in records} == {"pass"}
    assert sum(_asked(log).values()) == 6  # the two early time-outs, each asked once more
