"""The comment of a 500-question judged run with 100 regressions, rendered as GitHub renders it
(cmark-gfm, tests/gfm.py): the headline's kind, the counts line outside any quote, one row per
question (today: one per metric, 250 rows for 100 regressions), every regression named; and its
HTML report puts the counts and the failing questions before the 7,000-pixel chart."""

from __future__ import annotations

import sys
from pathlib import Path

from builders import run
from gfm import body_rows, rendered, section_table
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_html, render_markdown
from rag_ci.github.comments import GITHUB_COMMENT_LIMIT, comment_body

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_report_truncation import LONG_ID, _ids_named, _judged


def _500_questions():
    ids = [f"{LONG_ID}{i:04d}" for i in range(500)]
    base = run(*(_judged(i, 0.9, "pass", "The refund window is 30 days from delivery. " * 8) for i in ids))
    head = run(
        *(
            _judged(i, 0.1, "fail", "Refunds take 14 days from purchase, store credit only. " * 8)
            if n < 100
            else _judged(i, 0.9, "pass", "The refund window is 30 days from delivery. " * 8)
            for n, i in enumerate(ids)
        )
    )
    return ids, base, head


def test_a_500_question_comment_renders_with_one_row_per_regression_and_the_counts_outside_any_quote():
    ids, base, head = _500_questions()
    comparison = compare(base, head)
    body = comment_body(render_markdown(head, comparison, report_url="https://github.com/o/r/actions/runs/1"))
    assert len(body) <= GITHUB_COMMENT_LIMIT and _ids_named(body, ids[:100]) == []
    root = rendered(body)
    assert root.find_all("h2")[0].text() == "rag-ci: ❌ 100 regressions"
    [counts] = [p for p in root.find_all("p") if "questions pass" in p.text()]
    assert not counts.inside("blockquote") and counts.text().startswith(
        "100 regressions · 0 gains — 400/500 questions pass"
    )
    rows = body_rows(section_table(root, "Generation (100)"))
    assert 0 < len(rows) <= 100 and len({r[0] for r in rows}) == len(rows)  # one row per question
    assert (
        rows[0][2]
        == "relevancy 0.90→0.10 (≥ 0.50) · correctness 0.90→0.10 (≥ 0.50) · faithfulness 0.90→0.10 (≥ 0.50)"
    )


def test_the_html_report_of_500_questions_puts_counts_and_regressions_before_a_collapsed_chart():
    _, base, head = _500_questions()
    page = render_html(head, compare(base, head))
    assert (
        page.index('id="counts"')
        < page.index("Generation (100)")
        < page.index('<details id="chart" >')
        < page.index("<svg")
    )


# --- the new lines as GitHub shows them ----------------------------------------------

from test_comment_says_what_happened import EDITED, FULL, _charge, _timed  # noqa: E402

from builders import question  # noqa: E402


def test_as_github_renders_it_a_passing_headline_names_the_big_cost_rise_never_latency():
    base = run(*(_timed(f"Q{i}", 0.100, 0.001) for i in range(10)))
    head = run(*(_timed(f"Q{i}", 0.141, 0.002) for i in range(10)))
    [h2] = rendered(render_markdown(head, compare(base, head))).find_all("h2")
    assert h2.text() == "rag-ci: ✅ no regression · cost +100 %"


def test_as_github_renders_it_a_changed_source_is_its_own_section_and_its_next_step_is_one_line():
    base = run(_charge("CHARGE", FULL, "f1", passed=True), question("OTHER"))
    head = run(_charge("CHARGE", EDITED, "f2", passed=False), question("OTHER"))
    root = rendered(render_markdown(head, compare(base, head)))
    [row] = body_rows(section_table(root, "Source changed (1)"))
    assert row[0] == "CHARGE" and row[3].startswith(
        "du2/battery.md changed in this PR: the reference may be stale"
    )
    [next_step] = [p for p in root.find_all("p") if p.text().startswith("Next:")]
    assert not next_step.inside("blockquote")
    assert (
        next_step.text()
        == "Next: update the reference or the document where a cited source changed in this PR."
    )
