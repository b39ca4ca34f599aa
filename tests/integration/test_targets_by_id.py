"""Command targets whose replies carry ids: many requests in flight per process, no wait after a reply.

Once a reply carried its request's id, the process is sent requests without waiting for the
previous reply, and each reply goes to the request it names, whatever order they come in. A
stray line is recognised by its id instead of by timing: a reply written twice (the second
carries an id already answered), a reply for an id nobody asked, a reply without id. Each
errors the requests in flight on that process and restarts it; no question ever gets
another's answer.
"""

import asyncio
import sys
from pathlib import Path

import pytest

from rag_ci.errors import TargetError
from rag_ci.targets.base import arrived
from rag_ci.targets.command import CommandTarget

pytestmark = pytest.mark.slow
FAKES = Path(__file__).resolve().parents[1] / "fakes"


def request(qid: str) -> dict:
    return {"id": qid, "question": "What is the delay?", "corpora": ["a"]}


def ask_together(
    target: CommandTarget, first: str, rest: list[str], last: str | None = None, wait_s: float = 10
) -> list:
    """`first` alone (the target's first reply shows whether it sends ids), then `rest` all at
    once, then `last` alone (when given)."""

    async def one(qid: str):
        try:
            return arrived(await asyncio.wait_for(target.query(request(qid)), wait_s))[0]
        except (TimeoutError, TargetError) as exc:
            return exc

    async def go():
        await target.start()
        try:
            replies = [await one(first), *await asyncio.gather(*(one(qid) for qid in rest))]
            return replies + ([await one(last)] if last else [])
        finally:
            await target.stop()

    return asyncio.run(go())


def own_answers_only(qids: list[str], replies: list) -> None:
    for qid, reply in zip(qids, replies):
        assert isinstance(reply, (TargetError, asyncio.TimeoutError)) or reply["answer"].endswith(
            f"[{qid}]"
        ), (qid, reply)


def test_a_target_with_ids_gets_several_requests_at_once_on_one_process_each_reply_matched_by_id(tmp_path):
    log = tmp_path / "in_flight.log"
    target = CommandTarget(
        [sys.executable, str(FAKES / "pipelined_rag.py")],
        cwd=FAKES,
        env={"PIPELINED_RAG_LOG": str(log), "PIPELINED_RAG_DELAY": "0.3"},
    )
    assert target.max_parallel == 1  # before any reply: lock-step, one request per process
    qids = [f"Q{i}" for i in range(9)]
    replies = ask_together(target, qids[0], qids[1:])
    assert all(isinstance(r, dict) for r in replies), replies
    own_answers_only(qids, replies)
    assert target.max_parallel is None  # the engine may now send up to target.concurrency
    assert max(int(n) for n in log.read_text().split()) > 1  # sent before the previous reply came back
    assert target.restarts == 0


async def until(happened, guard_s: float = 60) -> None:
    """Wait for an event seen from outside the target (a log line, a diagnostic), up to a
    generous guard against a hang."""
    try:
        async with asyncio.timeout(guard_s):
            while not happened():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"{happened.__name__} never happened within {guard_s:g} s") from None


def test_a_request_that_times_out_costs_the_others_in_flight_on_its_process_nothing(tmp_path):
    # Lock-step kills the process at a time-out (its reply would answer the next question); by
    # id, the late reply is recognised and dropped, and the process keeps its other requests.
    # Ordered by events, not delays: Q3 (answered after 3 s) times out once Q4 and Q5 reached
    # the process (answered 0.6 s after they arrive), and Q6 is asked once Q3's late reply was dropped.
    log = tmp_path / "in_flight.log"
    target = CommandTarget(
        [sys.executable, str(FAKES / "pipelined_rag.py")],
        cwd=FAKES,
        env={"PIPELINED_RAG_SLOW": "Q3", "PIPELINED_RAG_DELAY": "0.6", "PIPELINED_RAG_LOG": str(log)},
    )

    def five_arrived() -> bool:
        return log.exists() and len(log.read_text().split()) == 5

    def late_reply_dropped() -> bool:
        return "dropped the reply to 'Q3'" in target.diagnostics()

    async def one(qid: str, wait_s: float = 60):
        try:
            return arrived(await asyncio.wait_for(target.query(request(qid)), wait_s))[0]
        except (TimeoutError, TargetError) as exc:
            return exc

    async def go():
        await target.start()
        try:
            first = await one("Q0")
            slow = asyncio.create_task(target.query(request("Q3")))
            answered = await one("Q1")
            in_flight_at_time_out = [asyncio.create_task(one(qid)) for qid in ("Q4", "Q5")]
            await until(five_arrived)  # Q0, Q3, Q1, Q4, Q5
            slow.cancel()  # what the question's time-out does to it (asyncio.wait_for cancels)
            replies = [first, answered, *[await t for t in in_flight_at_time_out]]
            await until(late_reply_dropped)
            return [*replies, await one("Q6"), slow]
        finally:
            await target.stop()

    q0, q1, q4, q5, q6, q3 = asyncio.run(go())
    assert q3.cancelled()
    own_answers_only(["Q0", "Q1", "Q4", "Q5", "Q6"], [q0, q1, q4, q5, q6])
    assert all(isinstance(r, dict) for r in (q0, q1, q4, q5, q6)), (q0, q1, q4, q5, q6)
    assert target.restarts == 0


def unruly(modes: str, **env: str) -> CommandTarget:
    return CommandTarget(
        [sys.executable, str(FAKES / "unruly_rag.py")],
        cwd=FAKES,
        env={"UNRULY_RAG": modes, "UNRULY_RAG_IDS": "1", **env},
        restart_limit=100,
    )


@pytest.mark.parametrize("mode", ["two_lines", "twice", "late"])
def test_a_reply_written_twice_is_caught_by_its_id_without_any_wait(mode):
    # Before: every reply was followed by a 20 ms wait for such a second line.
    qids = [f"Q{i}" for i in range(8)]
    target = unruly(f"Q2={mode}")
    replies = ask_together(target, "Q0", qids[1:], last="Q8")
    own_answers_only(qids + ["Q8"], replies)
    caught = [r for r in replies if isinstance(r, TargetError)]
    assert caught and any("second reply for 'Q2'" in str(e) for e in caught), replies
    assert replies[-1]["answer"].endswith("[Q8]")  # a fresh process for the next request


def test_a_duplicate_arriving_while_nothing_is_in_flight_errors_the_next_request_unsent(tmp_path):
    written = tmp_path / "late-written"
    target = unruly("Q1=late", UNRULY_RAG_LATE_WRITTEN=str(written))  # the reply, then again 0.3 s later

    def duplicate_seen() -> bool:
        # the file: the line is in the pipe; the target's state: its reader has taken it, with
        # nothing in flight (only then is Q2 refused unsent, rather than errored in flight)
        replies = target._workers[0].replies
        return written.exists() and replies is not None and replies.stray is not None

    async def go():
        await target.start()
        try:
            out = []
            for qid in ("Q0", "Q1", "Q2", "Q3"):
                if qid == "Q2":
                    await until(duplicate_seen)
                try:
                    out.append(arrived(await target.query(request(qid)))[0])
                except TargetError as exc:
                    out.append(exc)
            return out
        finally:
            await target.stop()

    q0, q1, q2, q3 = asyncio.run(go())
    assert q0["answer"].endswith("[Q0]") and q1["answer"].endswith("[Q1]") and q3["answer"].endswith("[Q3]")
    assert isinstance(q2, TargetError) and "second reply for 'Q1'" in str(q2) and "was not sent" in str(q2)


def test_a_process_that_dies_by_id_errors_its_requests_and_the_next_ones_get_a_fresh_process():
    target = CommandTarget(
        [sys.executable, str(FAKES / "unruly_rag.py")],
        cwd=FAKES,
        env={"UNRULY_RAG_IDS": "1", "UNRULY_RAG_CRASH": "Q2"},
        restart_limit=100,
    )
    replies = ask_together(target, "Q1", ["Q2"], last="Q3")
    assert isinstance(replies[1], TargetError) and "exited (code 3)" in str(replies[1])
    assert replies[0]["answer"].endswith("[Q1]") and replies[2]["answer"].endswith("[Q3]")


def test_a_reply_shaped_line_written_at_a_restart_never_answers_a_request_by_id(tmp_path):
    target = CommandTarget(
        [sys.executable, str(FAKES / "unruly_rag.py")],
        cwd=FAKES,
        restart_limit=100,
        env={
            "UNRULY_RAG_IDS": "1",
            "UNRULY_RAG_CRASH": "Q2",
            "UNRULY_RAG_BANNER": f"restarts={tmp_path / 'started'}",
        },
    )
    q1, q2, q3 = ask_together(target, "Q1", ["Q2"], last="Q3")
    # by id from Q1's reply on; Q2 crashes it
    assert q1["answer"].endswith("[Q1]") and isinstance(q2, TargetError)
    assert isinstance(q3, TargetError) and "at start, before any request" in str(q3) and "banner" in str(q3)


def test_a_reply_for_an_id_never_asked_is_a_stray_line():
    # other_id: a reply carrying id "Q0" (answered long ago), then the real one.
    replies = ask_together(unruly("Q3=other_id"), "Q1", ["Q2", "Q3", "Q4", "Q5"])
    own_answers_only(["Q1", "Q2", "Q3", "Q4", "Q5"], replies)
    assert any(isinstance(r, TargetError) and "'Q0'" in str(r) for r in replies), replies


def test_a_reply_for_an_unknown_id_is_a_stray_line():
    replies = ask_together(unruly("Q3=other_id"), "Q9", ["Q2", "Q3", "Q4"])  # Q0 was never asked here
    assert any(
        isinstance(r, TargetError) and "reply for id 'Q0', which is not in flight" in str(r) for r in replies
    ), replies
    own_answers_only(["Q9", "Q2", "Q3", "Q4"], replies)


def test_once_replies_carried_ids_a_reply_without_one_is_a_stray_line_in_the_no_wait_mode():
    replies = ask_together(unruly("Q3=no_id"), "Q1", ["Q2", "Q3", "Q4"])
    own_answers_only(["Q1", "Q2", "Q3", "Q4"], replies)
    assert any(isinstance(r, TargetError) and "a reply without `id`" in str(r) for r in replies), replies


TWELVE = "version: 1\nquestions:\n" + "".join(
    f"  - {{id: Q{i}, question: What is the delay?, doc_id: a, sources: [a/x.md], keywords: ['10 ms']}}\n"
    for i in range(12)
)


def test_a_run_sends_up_to_target_concurrency_requests_to_one_process_once_its_replies_carry_ids(
    tiny_project, tmp_path
):
    # Before: the engine sent at most `processes` requests at once to a command target, ids or not.
    from click.testing import CliRunner

    from rag_ci.cli import cli

    log = tmp_path / "in_flight.log"
    config = tiny_project(
        f"target:\n  kind: command\n  command: [python, {FAKES / 'pipelined_rag.py'}]\n"
        f"  env: {{PIPELINED_RAG_LOG: '{log}', PIPELINED_RAG_DELAY: '0.3'}}\n  concurrency: 4\n  timeout_s: 10\n",
        TWELVE,
    )
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        cli, ["run", "--config", str(config), "-o", str(out), "--no-progress"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    import json

    answers = {q["id"]: q["answer"] for q in json.loads(out.read_text())["questions"]}
    assert all(answers[f"Q{i}"].endswith(f"[Q{i}]") for i in range(12)), answers
    assert max(int(n) for n in log.read_text().split()) == 4  # target.concurrency, on the one process
