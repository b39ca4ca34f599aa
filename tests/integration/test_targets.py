"""Each target kind against real processes and servers: answers, crashes, time-outs, garbage."""

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from drive import replay
from rag_ci.errors import RagCiError, TargetError
from rag_ci.targets.command import CommandTarget
from rag_ci.targets.http import HttpTarget
from rag_ci.targets.python import PythonTarget

FAKES = Path(__file__).resolve().parents[1] / "fakes"
REQ = {"id": "Q1", "question": "What is the delay?", "corpora": ["a"]}


def ask(target, *requests):
    return replay(target, *requests)


def command_target(**kw):
    return CommandTarget([sys.executable, str(FAKES / "tiny_rag.py")], cwd=FAKES, **kw)


def test_command_target_answers_json_lines():
    (reply,) = ask(command_target(), REQ)
    assert reply["answer"] == "The delay is 10 ms on CAN." and reply["contexts"][0]["doc_id"] == "a"


def test_command_target_restarts_after_a_crash_and_keeps_stderr():
    target = command_target()
    crash, after = ask(target, {**REQ, "question": "please crash"}, REQ)
    assert isinstance(crash, TargetError) and "exited (code 3)" in str(crash)
    assert after["answer"].startswith("The delay")
    assert (
        "crashing on purpose" in target.diagnostics() and "restarting target process" in target.diagnostics()
    )


def test_command_target_non_json_line_is_a_malformed_response():
    garbage, after = ask(command_target(), {**REQ, "question": "garbage"}, REQ)
    assert isinstance(garbage, TargetError) and "not a JSON line" in str(garbage)
    assert after["answer"].startswith("The delay")


def test_command_target_time_out_kills_the_stuck_process_and_the_next_question_works():
    # tiny_rag sleeps 30 s on "sleep": 2 s of waiting ends it on any machine
    slow, after = ask(command_target(), ({**REQ, "question": "sleep"}, 2), REQ)
    assert isinstance(slow, asyncio.TimeoutError)
    assert after["answer"].startswith("The delay")  # not the stale reply to "sleep"


def test_command_that_dies_at_start_is_a_start_up_error():
    target = CommandTarget(
        [sys.executable, "-c", "import sys; print('no such index', file=sys.stderr); sys.exit(4)"], cwd=FAKES
    )
    with pytest.raises(RagCiError, match="exited at start \\(code 4\\)"):
        asyncio.run(target.start())


def test_command_target_gives_up_after_the_restart_limit():
    target = command_target(restart_limit=1)
    first, second, third = ask(target, {**REQ, "question": "crash"}, {**REQ, "question": "crash"}, REQ)
    assert (
        isinstance(second, TargetError) and isinstance(third, TargetError) and "not restarting" in str(third)
    )


def test_python_target_sync_and_errors():
    target = PythonTarget("tiny_rag:answer", search_path=[FAKES])
    ok, crash = ask(target, REQ, {**REQ, "question": "crash"})
    assert ok["contexts"][0]["source"] == "a/x.md#0"
    assert isinstance(crash, TargetError) and "RuntimeError: boom" in str(crash)


def test_python_target_bad_entry_is_a_clear_error():
    with pytest.raises(RagCiError, match="cannot import no_such_module"):
        asyncio.run(PythonTarget("no_such_module:answer", search_path=[FAKES]).start())


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "500" in body["question"]:
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"internal")
            return
        payload = (
            b"<html>not json"
            if "html" in body["question"]
            else json.dumps({"answer": "hi " + body["id"], "contexts": []}).encode()
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def http_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_target_posts_and_reports_http_errors(http_server):
    target = HttpTarget(http_server + "/query", timeout_s=2, health_url="/health")
    ok, err, html = ask(target, REQ, {**REQ, "question": "500"}, {**REQ, "question": "html"})
    assert ok["answer"] == "hi Q1"
    assert isinstance(err, TargetError) and "HTTP 500" in str(err)
    assert isinstance(html, TargetError) and "not JSON" in str(html)


def test_http_target_starts_its_server_and_waits_for_health(tmp_path):
    server = tmp_path / "server.py"
    server.write_text(
        "import http.server, json, sys, time\n"
        "time.sleep(0.3)\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def log_message(self, *a): pass\n"
        "    def do_GET(self): self.send_response(200); self.end_headers()\n"
        "    def do_POST(self):\n"
        "        n = int(self.headers['Content-Length']); req = json.loads(self.rfile.read(n))\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(json.dumps({'answer': req['question']}).encode())\n"
        "print('listening', flush=True)\n"
        "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
    )
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = HttpTarget(
        f"http://127.0.0.1:{port}/query",
        timeout_s=2,
        health_url="/health",
        start=["python", str(server), str(port)],
        cwd=tmp_path,
        startup_timeout_s=10,
    )
    (reply,) = ask(target, REQ)
    assert reply == {"answer": "What is the delay?"}
    assert "listening" in target.diagnostics()


def test_http_target_server_that_exits_during_start_up(tmp_path):
    target = HttpTarget(
        "http://127.0.0.1:9/query",
        timeout_s=1,
        health_url="/health",
        start=["python", "-c", "print('bad config'); raise SystemExit(2)"],
        cwd=tmp_path,
        startup_timeout_s=5,
    )
    with pytest.raises(RagCiError, match="exited during start-up \\(code 2\\)"):
        asyncio.run(target.start())
