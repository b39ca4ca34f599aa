"""A question's time-out stops once its reply line has arrived: checking and parsing the line
is rag-ci's time, not the target's.

Before, the clock ran on while rag-ci checked a long reply (20 s for a red team's 50 MB line),
and a target that had answered in 1.7 s was recorded as timed out at `timeout_s: 5`. Here the
reading is made slower than the time-out by construction: rag-ci's own check, wrapped so that
it first sleeps longer than the whole time-out. The reply is all there before the check starts, so the
question must get it, however slow the check or the machine.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from builders import free_port
from rag_ci.targets import command, python, reply_json
from rag_ci.targets.base import arrived
from rag_ci.targets.breaker import TargetBreaker
from rag_ci.targets.command import CommandTarget
from rag_ci.targets.http import HttpTarget
from rag_ci.targets.python import PythonTarget
from rag_ci.targets.reply_json import OFF_LOOP_BYTES

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
# Long enough for the fake to write its reply (up to 8 MB) on a busy machine: the test is about
# what happens after the reply arrived, and a reply that could not arrive in time proves nothing.
TIMEOUT_S = 3.0


def slower_than_the_time_out(monkeypatch, module) -> None:
    """rag-ci's reply check in `module`, made to take longer than the whole time-out before it runs."""
    check = module.reply_bounds_problem

    def slow_check(data):
        time.sleep(TIMEOUT_S + 1)
        return check(data)

    monkeypatch.setattr(module, "reply_bounds_problem", slow_check)


def ask_under_the_time_out(target, question: str):
    """One question under the breaker's time-out, as the replay asks it."""

    async def go():
        await target.start()
        breaker = TargetBreaker("the fake", max_wait_s=60, max_errors_at_start=5)
        try:
            async with breaker.call(TIMEOUT_S):
                return arrived(await target.query({"id": "Q1", "question": question, "corpora": ["a"]}))[0]
        finally:
            await target.stop()

    return asyncio.run(go())


@pytest.mark.parametrize("kind", ["command", "python"])
def test_a_reply_that_arrived_in_time_is_not_timed_out_while_rag_ci_reads_it(monkeypatch, kind):
    long_line = {"TINY_RAG_PAD": str(2 * OFF_LOOP_BYTES)}  # read off the event loop, as a 50 MB one is
    if kind == "command":
        target = CommandTarget([sys.executable, str(FAKES / "tiny_rag.py")], cwd=FAKES, env=long_line)
        slower_than_the_time_out(monkeypatch, command)
    else:
        target = PythonTarget("tiny_rag:answer", search_path=[FAKES], env=long_line)
        slower_than_the_time_out(monkeypatch, python)

    reply = ask_under_the_time_out(target, "What is the delay?")

    assert "10 ms" in reply["answer"], reply


def test_an_http_reply_received_in_time_is_not_timed_out_while_rag_ci_reads_it(monkeypatch):
    check = reply_json.load_reply

    def slow_load(data):  # rag-ci's check and parse of the body, made slower than the time-out
        time.sleep(TIMEOUT_S + 1)
        return check(data)

    monkeypatch.setattr(reply_json, "load_reply", slow_load)
    port = free_port()
    target = HttpTarget(
        f"http://127.0.0.1:{port}/query",
        timeout_s=60,
        health_url="/health",
        start=[sys.executable, str(FAKES / "outage_rag.py"), str(port)],
        cwd=FAKES,
        env={**os.environ, "OUTAGE_RAG": "wide"},  # an 8 MB reply
    )

    reply = ask_under_the_time_out(target, "What is the delay?")

    assert reply["answer"] == "x" and len(reply["extra"]) == 40_000


def test_a_target_that_does_not_answer_still_times_out():
    target = CommandTarget([sys.executable, "-c", "import time; time.sleep(60)"], cwd=FAKES)

    with pytest.raises(TimeoutError):
        ask_under_the_time_out(target, "What is the delay?")
