"""The report: verdict first, tables, untrusted text escaped, size limit respected."""

from builders import metric, question, run
from rag_ci.core.compare import compare
from rag_ci.core.render import escape_md, render_html, render_markdown

HOSTILE = '<script>alert(1)</script> @everyone | `rm -rf` [x](http://evil) **bold**\n# heading'


def test_escape_md_makes_hostile_text_inert():
    out = escape_md(HOSTILE, limit=500)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "@everyone" not in out and "&#64;everyone" in out
    assert "|" not in out.replace("\\|", "")
    assert "`" not in out.replace("\\`", "")
    assert "\n" not in out


def test_escape_md_cuts_long_text():
    assert len(escape_md("x" * 1000, limit=50)) == 50


def test_markdown_puts_verdict_first_and_lists_regressions():
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), question("B", "fail"))
    head = run(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), question("B"))
    text = render_markdown(head, compare(base, head))
    assert text.startswith("## rag-ci: ❌ 1 regression")
    assert "| A | a | hit_at_k | 1.00 → 0.00 |" in text
    assert "### Gains" in text and "| B |" in text
    assert text.index("### Regressions") < text.index("### Gains")


def test_hostile_answer_and_reason_are_escaped_in_markdown_and_html():
    bad = question("A", "fail", answer=HOSTILE, metrics=[metric("kw", 0.0)])
    bad.metrics["kw"].reason = HOSTILE
    head = run(bad)
    md = render_markdown(head, compare(run(question("A")), head))
    html = render_html(head, compare(run(question("A")), head))
    for text in (md, html):
        assert "<script>" not in text
    assert "@everyone" not in md


def test_bootstrap_report_without_baseline_lists_failing_questions():
    text = render_markdown(run(question("A"), question("B", "fail")), notice="bootstrap: no baseline")
    assert "no baseline" in text and "Failing questions (1)" in text


def test_long_report_is_shortened_under_the_limit():
    base = run(*[question(f"Q{i:04d}", metrics=[metric("hit_at_k", 1.0, 1.0)]) for i in range(600)])
    head = run(*[question(f"Q{i:04d}", "fail", answer="x" * 300, metrics=[metric("hit_at_k", 0.0, 1.0)]) for i in range(600)])
    text = render_markdown(head, compare(base, head), max_chars=20000)
    assert len(text) <= 20000 and "more" in text


def test_html_is_standalone_with_an_inline_chart():
    head = run(question("A"), question("B", "fail"))
    page = render_html(head, compare(run(question("A"), question("B")), head))
    assert page.startswith("<!doctype html>") and "<svg" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
