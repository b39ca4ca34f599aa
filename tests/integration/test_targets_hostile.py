"""Targets that tried to fool the replay in the second hostile campaign.

Command targets: what a question gets must not depend on timing (a reply written twice
errors that question, every time), a reply-shaped line written at a (re)start never becomes
an answer, and a target whose replies carry ids cannot slip in one without. Python targets:
lines the user's code writes on the worker's reply channel answer nothing, an import that
never ends is bounded by timeout_s, a module that wrecks builtins and sys.modules does not
wreck the worker. A process whose child keeps stdout open after it died ends cleanly.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drive import kill_processes, processes_running, replay
from rag_ci.core.config import PythonTargetConfig
from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets import build_target
from rag_ci.targets.command import CommandTarget
from rag_ci.targets.python import PythonTarget

pytestmark = pytest.mark.slow
FAKES = Path(__file__).resolve().parents[1] / "fakes"
UNRULY = [sys.executable, str(FAKES / "unruly_rag.py")]


def request(qid: str) -> dict:
    return {"id": qid, "question": "What is the delay?", "corpora": ["a"]}


def unruly(**env: str) -> CommandTarget:
    return CommandTarget(UNRULY, cwd=FAKES, env=env, restart_limit=1000)


def test_a_reply_written_twice_in_two_writes_errors_its_own_question_every_time():
    # Before: the second line was seen now (this question errored) or at the next request
    # (the next one errored, this one passed): a mix that re-asks cleared as "flaky, 1 of 4".
    ids = [f"Q{i}" for i in range(20)]
    target = unruly(UNRULY_RAG=",".join(f"{qid}=two_lines" for qid in ids))
    replies = replay(target, *(request(qid) for qid in ids))
    assert all(isinstance(r, TargetError) and "more than one stdout line" in str(r) for r in replies), replies


def test_a_reply_shaped_line_written_at_every_restart_never_becomes_an_answer():
    # Before: checked only before the first start; after the restart that Q2's crash causes,
    # the banner was read as Q3's reply.
    replies = replay(
        unruly(UNRULY_RAG_BANNER="1", UNRULY_RAG_CRASH="Q2"),
        request("Q1"),
        request("Q2"),
        request("Q3"),
        request("Q4"),
    )
    for reply in replies:
        assert isinstance(reply, TargetError), reply
    assert "at start, before any request" in str(replies[0]) and "at start, before any request" in str(
        replies[2]
    )


def test_a_target_whose_replies_carry_ids_cannot_send_one_without():
    q1, q2, q3 = replay(
        unruly(UNRULY_RAG="Q2=no_id", UNRULY_RAG_IDS="1"), request("Q1"), request("Q2"), request("Q3")
    )
    assert q1["answer"].endswith("[Q1]") and q3["answer"].endswith("[Q3]")
    assert isinstance(q2, TargetError) and "a reply without `id`" in str(q2)


def test_a_target_that_never_sends_ids_is_still_read_in_lock_step():
    replies = replay(unruly(), *(request(f"Q{i}") for i in range(3)))
    assert [r["answer"][-4:] for r in replies] == ["[Q0]", "[Q1]", "[Q2]"]


KEEPS_STDOUT_OPEN = """
import json, os, sys, time
if os.fork() == 0:  # a child that inherits stdout and outlives its parent (unless the run ends it)
    time.sleep(600)
    sys.exit(0)
for line in sys.stdin:
    request = json.loads(line)
    if request["id"] == "Q2":
        os._exit(3)
    print(json.dumps({"answer": "10 ms [" + request["id"] + "]", "contexts": [{"text": "t", "doc_id": "a", "source": "a/x.md"}]}), flush=True)
"""


def test_a_child_keeping_stdout_open_after_its_parent_died_ends_the_question_and_the_run_cleanly(
    tiny_project, tmp_path
):
    # Before: Q2 waited for its time-out (the pipe never closed), the orphan outlived the run,
    # and asyncio printed "Exception ignored ... Event loop is closed" tracebacks at exit.
    # The question time-out and the orphan's life are 600 s: a run that waited for either is
    # stopped by the 120 s guard, so a pass proves Q2 ended on its parent's exit.
    (tmp_path / "keeps_open.py").write_text(KEEPS_STDOUT_OPEN)
    questions = "version: 1\nquestions:\n" + "".join(
        f"  - {{id: Q{i}, question: What is the delay?, doc_id: a}}\n" for i in (1, 2, 3)
    )
    config = tiny_project(
        f"target: {{kind: command, command: [python, {tmp_path / 'keeps_open.py'}], concurrency: 1, timeout_s: 600}}\n"
        "gate: {max_error_rate: 1.0}\n",
        questions,
    )
    try:
        done = subprocess.run(
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
            capture_output=True,
            text=True,
            timeout=120,  # a hang guard only (a normal run takes a few seconds)
            env=os.environ.copy(),
        )
        left_running = processes_running(str(tmp_path / "keeps_open.py"))
    finally:
        kill_processes(str(tmp_path / "keeps_open.py"))  # what a failed run left (nothing, on a pass)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    records = {q["id"]: q for q in json.loads((tmp_path / "r.json").read_text())["questions"]}
    assert "exited (code 3)" in records["Q2"]["error"]
    assert records["Q3"]["answer"].endswith("[Q3]")
    assert left_running == []


def hostile_python(mode: str, **kwargs) -> PythonTarget:
    return PythonTarget(
        "hostile_python_rag:answer", search_path=[FAKES], env={"HOSTILE_PYTHON_RAG": mode}, **kwargs
    )


def test_replies_forged_on_the_python_workers_reply_channel_answer_nothing():
    # Before: the forged {"id": "Q1", "reply": ...} written on the channel was Q1's answer.
    target = hostile_python("forge")
    replies = replay(target, request("Q1"), request("Q2"), request("Q3"))
    assert [r["answer"][-4:] for r in replies] == ["[Q1]", "[Q2]", "[Q3]"], replies
    assert "forged" not in json.dumps(replies)
    assert "dropped a line on the python worker's reply channel" in target.diagnostics()


def test_a_python_entry_whose_import_never_ends_is_stopped_after_timeout_s():
    config = PythonTargetConfig(
        kind="python",
        entry="hostile_python_rag:answer",
        path=[str(FAKES)],
        timeout_s=1,
        env={"HOSTILE_PYTHON_RAG": "hang"},
    )

    async def start():
        target = build_target(config, FAKES)
        try:
            # before: no bound at all. A hang guard only: ending here is a TimeoutError, not the
            # RagCiError that names target.timeout_s.
            await asyncio.wait_for(target.start(), 120)
        finally:
            await target.stop()

    with pytest.raises(RagCiError, match=r"importing it took longer than target.timeout_s \(1s\)"):
        asyncio.run(start())


def test_a_module_that_wrecks_builtins_and_sys_modules_does_not_wreck_the_worker():
    # Before: the worker could not even say it was ready (json and isinstance were the module's).
    replies = replay(hostile_python("builtins"), request("Q1"), request("Q2"))
    assert [r["answer"][-4:] for r in replies] == ["[Q1]", "[Q2]"], replies


def _deep_refused(reply) -> bool:
    return isinstance(reply, TargetError) and "nested deeper than" in str(reply)


def test_a_command_reply_nested_200000_deep_is_a_clear_target_error_not_a_recursion_error():
    """Before: `internal error: RecursionError`."""
    q1, q2 = replay(unruly(UNRULY_RAG="Q1=deep"), request("Q1"), request("Q2"))
    assert _deep_refused(q1), q1
    assert q2["answer"].endswith("[Q2]")


def test_an_http_reply_nested_200000_deep_is_a_clear_target_error_not_a_recursion_error():
    from builders import free_port
    from rag_ci.targets.http import HttpTarget

    port = free_port()
    target = HttpTarget(
        f"http://127.0.0.1:{port}/query",
        timeout_s=10,
        health_url="/health",
        start=[sys.executable, str(FAKES / "outage_rag.py"), str(port)],
        cwd=FAKES,
        env={**os.environ, "OUTAGE_RAG": "deep"},
    )
    [reply] = replay(target, request("Q1"))
    assert _deep_refused(reply), reply


@pytest.mark.parametrize("question", ["deep", "deep line", "nested"])
def test_a_python_reply_nested_200000_deep_is_a_clear_target_error_not_a_recursion_error(question):
    target = PythonTarget("unruly_python_rag:answer", search_path=[FAKES])
    deep, after = replay(target, {**request("Q1"), "question": question}, request("Q2"), wait_s=20)
    if question == "deep":  # the worker cannot encode it: the question errors, clearly
        assert isinstance(deep, TargetError) and "the reply could not be encoded (nested too deeply)" in str(
            deep
        ), deep
    elif question == "nested":  # encoded, and refused before rag-ci parses it
        assert _deep_refused(deep), deep
    else:  # a deep line written on stdout is the module's output, not a reply
        assert deep["answer"] and "[[[" not in json.dumps(deep)
    assert after["answer"]


def test_a_function_that_patches_the_workers_json_encoder_and_base_exception_errors_its_question():
    """Before: a call that replaced json's encoder and
    builtins.BaseException inside the worker turned its own exception into a passing reply,
    and the next questions got that forged reply too."""
    target = hostile_python("encoder")
    q1, q2, q3 = replay(
        target, {**request("Q1"), "question": "patch the worker"}, request("Q2"), request("Q3")
    )
    assert isinstance(q1, TargetError) and "RuntimeError: this question fails" in str(q1), q1
    assert [r["answer"][-4:] for r in (q2, q3)] == ["[Q2]", "[Q3]"], (q2, q3)
    assert "forged" not in json.dumps([q2, q3])


def test_an_8_mb_reply_within_the_depth_bound_is_checked_and_parsed_off_the_event_loop(monkeypatch):
    """The depth check was one pass per level (100 over the whole reply), on the event loop,
    inside the question's time-out: a reply the target sent at once was recorded as a time-out
    and every other question in flight stalled. Now linear (tests/unit/test_hostile_files.py
    checks it against a parser), and a long reply is checked and parsed in a worker thread."""
    import threading

    from builders import free_port
    from rag_ci.targets import reply_json
    from rag_ci.targets.http import HttpTarget

    threads: list[int] = []
    checked = reply_json.load_reply

    def spy(data):  # rag-ci's own function, watched: which thread decodes the reply
        threads.append(threading.get_ident())
        return checked(data)

    monkeypatch.setattr(reply_json, "load_reply", spy)
    port = free_port()
    target = HttpTarget(
        f"http://127.0.0.1:{port}/query",
        timeout_s=60,
        health_url="/health",
        start=[sys.executable, str(FAKES / "outage_rag.py"), str(port)],
        cwd=FAKES,
        env={**os.environ, "OUTAGE_RAG": "wide"},
    )

    async def go():
        await target.start()
        try:
            return threading.get_ident(), await target.query(request("Q1"))
        finally:
            await target.stop()

    loop_thread, reply = asyncio.run(go())

    assert reply["answer"] == "x" and len(reply["extra"]) == 40_000
    assert threads and loop_thread not in threads, (loop_thread, threads)
