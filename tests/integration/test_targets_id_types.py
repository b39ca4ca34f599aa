"""An id echoed as another JSON type is named with its type: before, a target answering
`"id": 1` to the request `"id": "1"` read "reply for id '1' while '1' was asked"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from drive import replay
from rag_ci.errors import TargetError
from rag_ci.targets.command import CommandTarget

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"


def request(qid: str) -> dict:
    return {"id": qid, "question": "What is the delay?", "corpora": ["a"]}


def unruly(**env: str) -> CommandTarget:
    return CommandTarget(
        [sys.executable, str(FAKES / "unruly_rag.py")], cwd=FAKES, env=env, restart_limit=100
    )


def test_a_lock_step_reply_with_the_id_as_a_number_says_so():
    [q1] = replay(unruly(UNRULY_RAG="1=number_id"), request("1"))

    assert isinstance(q1, TargetError), q1
    assert "reply for id the number 1 while '1' was asked: the number 1, not the string \"1\"" in str(q1), q1


def test_a_reply_by_id_with_the_id_as_a_number_says_so():
    # Q1's reply carries its id: from then on the process is asked by id (by_id.py).
    q1, q2 = replay(unruly(UNRULY_RAG="2=number_id", UNRULY_RAG_IDS="1"), request("Q1"), request("2"))

    assert q1["answer"].endswith("[Q1]"), q1
    assert isinstance(q2, TargetError), q2
    assert (
        'a reply for id the number 2, which is not in flight on this process: the number 2, not the string "2"'
        in str(q2)
    ), q2
