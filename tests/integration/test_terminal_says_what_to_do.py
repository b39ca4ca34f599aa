"""The terminal view of `rag-ci compare`, on a real pseudo-terminal as a person sees it: its
"Next:" line fits what it shows (no entries to paste are on a terminal; an error is the target's
to fix, not a change to accept) and a target's hidden error (its log) is shown under the errors."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from builders import metric, question, run
from rag_ci.files.results_file import save_results

sys.path.insert(0, str(Path(__file__).parent))
from test_cli_terminal import ANSI, on_a_terminal

pytestmark = pytest.mark.slow
HIT = "hit_at_k"


def _write(folder: Path, base, head) -> None:
    save_results(folder / "base.json", base)
    save_results(folder / "head.json", head)


def _shown(folder: Path) -> str:
    code, shown = on_a_terminal(["compare", "base.json", "head.json"], folder)
    assert code == 1, shown
    assert "\x1b[" in shown  # the terminal view, in colour
    return " ".join(ANSI.sub("", shown).split())  # rich wraps at the terminal's width


def test_next_on_a_terminal_says_where_the_entries_to_paste_are_never_under_a_row_it_does_not_show(tmp_path):
    _write(
        tmp_path,
        run(question("A", metrics=[metric(HIT, 1.0, 1.0)])),
        run(question("A", "fail", metrics=[metric(HIT, 0.0, 1.0)])),
    )
    shown = _shown(tmp_path)
    # today: "(the entry to paste is under its row)"
    assert "under its row" not in shown and "under each group's table" not in shown
    assert "`--format md` prints the entries to paste" in shown


def test_a_target_answering_503_is_told_to_fix_the_target_with_its_log_not_to_fix_or_accept(tmp_path):
    base = run(*(question(f"E{i}", metrics=[metric(HIT, 1.0, 1.0)]) for i in range(3)))
    head = run(*(question(f"E{i}", "error", error="HTTP 503 Service Unavailable") for i in range(3)))
    head.meta.diagnostics = (
        "Traceback (most recent call last):\nOSError: model weights not found at /models/bge"
    )
    _write(tmp_path, base, head)
    shown = _shown(tmp_path)
    nxt = shown[shown.index("Next: ") :]
    assert "accept" not in nxt  # today: "fix the regressions, or accept an intended one …"
    assert nxt.startswith("Next: fix what makes the target error")
    assert re.search(r"the target's last log lines \(redacted\): .*OSError: model weights not found", shown)
