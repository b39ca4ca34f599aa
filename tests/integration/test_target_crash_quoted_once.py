"""A command target that crashes on every question: each question's error quotes the stderr of
its own crash once, so a broken run's message says the target's line once and its errors count
together under one cause."""

from __future__ import annotations

import asyncio
import sys

import pytest

from rag_ci.core.results import QuestionResult
from rag_ci.core.scoring.verdict import error_causes
from rag_ci.targets.command import CommandTarget

pytestmark = pytest.mark.slow
CRASH = "RuntimeError: the index is not loaded"


def test_each_crash_quotes_its_own_stderr_line_once_and_the_errors_count_as_one_cause(tmp_path):
    script = tmp_path / "crashy.py"
    script.write_text(
        f"import sys\nfor line in sys.stdin:\n    print({CRASH!r}, file=sys.stderr, flush=True)\n    sys.exit(1)\n"
    )

    async def ask_three() -> list[str]:
        target = CommandTarget([sys.executable, str(script)], cwd=tmp_path)
        await target.start()
        errors = []
        try:
            for i in range(3):
                with pytest.raises(Exception) as caught:
                    await target.query({"id": f"Q{i}", "question": "q", "corpora": ["a"]})
                errors.append(str(caught.value))
        finally:
            await target.stop()
        return errors

    errors = asyncio.run(ask_three())
    # today: twice, then three times, after each restart
    assert all(e.count(CRASH) == 1 for e in errors), errors
    questions = [
        QuestionResult(
            id=f"Q{i}", question="q", question_hash="h", corpora=["a"], request={}, verdict="error", error=e
        )
        for i, e in enumerate(errors)
    ]
    [(count, cause, _)] = error_causes(questions)
    assert count == 3 and cause.count(CRASH) == 1


def test_two_copies_crashing_at_once_each_quote_their_own_crash_once(tmp_path):
    # Two processes (`processes: 2`) write into the target's one stderr tail: a crash quoted the
    # other copy's identical line too (issue 55: "the target's stderr line quoted twice").
    script = tmp_path / "crashy.py"
    script.write_text(
        "import sys, time\nfor line in sys.stdin:\n"
        f"    print({CRASH!r}, file=sys.stderr, flush=True)\n    time.sleep(0.2)\n    sys.exit(1)\n"
    )

    async def ask_two_at_once() -> list[BaseException]:
        target = CommandTarget([sys.executable, str(script)], cwd=tmp_path, processes=2)
        await target.start()
        try:
            asked = [target.query({"id": f"Q{i}", "question": "q", "corpora": ["a"]}) for i in range(2)]
            return await asyncio.gather(*asked, return_exceptions=True)
        finally:
            await target.stop()

    errors = [str(e) for e in asyncio.run(ask_two_at_once())]
    assert len(errors) == 2 and all(e.count(CRASH) == 1 for e in errors), errors
