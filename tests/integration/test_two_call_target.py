"""A two-call http target as txtai's stock API needs it (tests/fakes/two_server_rag.py): the answer
at one server, the search at a second one that the start command launches and that binds later;
the two cannot take a search while an answer runs. `target.retrieve.order: after`, readiness for
every URL, the start command's whole process group stopped after the run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import free_port, write
from rag_ci.cli import cli

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay?, doc_id: a, sources: [a/x.md]}
  - {id: Q2, question: What is the delay on b?, doc_id: b, sources: [b/y.md]}
  - {id: Q3, question: compare both, doc_id: [a, b], sources: [a/x.md, b/y.md]}
"""


def _alive(pid: int) -> bool:
    """A running process (a zombie, dead but not yet reaped by its new parent, is not one)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_order_after_readiness_of_both_servers_and_the_process_group_stopped(tmp_path):
    answer_port, search_port = free_port(), free_port()
    pidfile = tmp_path / "search.pid"
    write(tmp_path / "questions.yml", QUESTIONS)
    config = write(
        tmp_path / "rag-ci.yml",
        f"""questions: questions.yml
corpora: {{a: {{description: A}}, b: {{description: B}}}}
metrics: {{hit_at_k: {{k: 3}}}}
target:
  kind: http
  url: http://127.0.0.1:{answer_port}/answer
  start: [{sys.executable}, {FAKES / "two_server_rag.py"}, '{answer_port}', '{search_port}', '{pidfile}']
  concurrency: 1
  request: {{question: "{{question}}"}}
  response: {{answer: answer}}
  retrieve:
    url: http://127.0.0.1:{search_port}/search
    order: after
    request: {{query: "{{question}}", collections: "{{corpora}}"}}
    response:
      contexts: hits
      context: {{text: text, doc_id: collection, source: path}}
""",
    )
    done = CliRunner().invoke(
        cli,
        ["run", "--config", str(config), "-o", str(tmp_path / "r.json"), "--no-progress"],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.output
    questions = json.loads((tmp_path / "r.json").read_text())["questions"]
    assert [q["error"] for q in questions] == [None, None, None]  # no 500, no "unreachable"
    assert [q["verdict"] for q in questions] == ["pass", "pass", "pass"]
    # the search server was the start command's child: stopped with it
    assert not _alive(int(pidfile.read_text()))
