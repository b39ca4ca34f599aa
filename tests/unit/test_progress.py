"""Progress: plain periodic lines when the output is not a terminal (CI logs)."""

import io

from rag_ci.runtime.progress import LineProgress, SilentProgress, make_progress


def test_plain_lines_every_tenth_and_at_the_end():
    stream = io.StringIO()
    progress = LineProgress(20, stream)
    for i in range(20):
        progress.advance("fail" if i % 5 == 0 else "pass")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # the first answer, then every tenth
    assert lines[-1] == "[rag-ci] 20/20 questions (4 not passing)"
    assert "\x1b" not in stream.getvalue()


def test_non_terminal_gets_plain_lines_and_disabled_gets_nothing():
    assert isinstance(make_progress(5, True, io.StringIO()), LineProgress)
    assert isinstance(make_progress(5, False, io.StringIO()), SilentProgress)
