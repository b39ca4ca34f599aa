"""Latency rows on the report (issue 55): in 6 judged re-runs of an unchanged PR, 11 rows were
⚠️ (10 of them speed-ups) and a passing headline read "p95 +78 %" on a loaded runner. A row is
flagged only for a rise beyond the noise this run's runner shows (the same question timed twice),
never for a speed-up, and latency is never a word of a passing headline. Each test failed on
the code before the fix; the report is read as GitHub renders it (cmark-gfm)."""

from __future__ import annotations

from builders import question, run
from gfm import body_rows, rendered
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.latency_noise import runner_spread
from rag_ci.core.reporting.deltas import delta_rows
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Sample

BASE_MS = [90 + (i % 7) * 5 for i in range(40)]


def _timed(latencies_ms: list[float], repeats: dict[int, list[float]] | None = None):
    records = []
    for i, ms in enumerate(latencies_ms):
        q = question(f"Q{i:02d}", latency=ms / 1000)
        if repeats and i in repeats:  # asked more than once: each answer's own time
            q.samples = [Sample(verdict="pass", latency_s=t / 1000) for t in repeats[i]]
        records.append(q)
    return run(*records)


def _latency_flags(md: str) -> dict[str, str]:
    table = rendered(md).find_all("table")[0]
    return {r[0]: r[4] for r in body_rows(table) if r[0].startswith("latency")}


def test_a_speed_up_is_never_flagged():
    base, head = _timed(BASE_MS), _timed([ms / 2 for ms in BASE_MS])
    md = render_markdown(head, compare(base, head))
    assert _latency_flags(md) == {"latency p50": "", "latency p95": ""}  # before the fix: ⚠️ on both
    assert md.splitlines()[0] == "## rag-ci: ✅ no regression"


def test_a_rise_within_the_spread_the_runner_shows_on_the_same_question_is_not_flagged():
    """Every question 50 % slower, but the same question asked twice on this runner took 60 %
    longer the second time: the rise is the runner's, not the PR's."""
    repeats = {i: [BASE_MS[i] * 1.5, BASE_MS[i] * 1.5 * 1.6] for i in range(5)}
    base, head = _timed(BASE_MS), _timed([ms * 1.5 for ms in BASE_MS], repeats)
    assert runner_spread(head) is not None and abs(runner_spread(head) - 0.6) < 1e-9
    md = render_markdown(head, compare(base, head))
    assert _latency_flags(md) == {"latency p50": "", "latency p95": ""}  # before the fix: ⚠️ on both


def test_a_rise_beyond_the_runners_spread_is_flagged_in_its_row_and_not_in_the_passing_headline():
    repeats = {i: [BASE_MS[i] * 2, BASE_MS[i] * 2 * 1.05] for i in range(5)}
    base, head = _timed(BASE_MS), _timed([ms * 2 for ms in BASE_MS], repeats)
    md = render_markdown(head, compare(base, head))
    assert _latency_flags(md) == {"latency p50": "⚠️", "latency p95": "⚠️"}
    assert md.splitlines()[0] == "## rag-ci: ✅ no regression"  # before the fix: "… · p95 +100 %"


def test_without_repeated_questions_the_runner_is_not_measured_and_the_confidence_bound_decides():
    head = _timed([ms * 2 for ms in BASE_MS], {0: [180, 400]})  # one repeated question: its luck
    assert runner_spread(head) is None
    [p50, p95] = [
        r for r in delta_rows(compare(_timed(BASE_MS), head), head) if r.label.startswith("latency")
    ]
    assert (p50.flag, p95.flag) == ("⚠️", "⚠️")
