"""The report: verdict first, tables, untrusted text escaped, size limit respected."""

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import escape_md, render_html, render_markdown

HOSTILE = "<script>alert(1)</script> @everyone | `rm -rf` [x](http://evil) **bold**\n# heading"


def test_escape_md_makes_hostile_text_inert():
    out = escape_md(HOSTILE, limit=500)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "@everyone" not in out and "&#64;everyone" in out
    assert "|" not in out.replace("\\|", "")
    assert "`" not in out.replace("\\`", "").replace("`http://evil)`", "")
    assert "\n" not in out


def test_escape_md_cuts_long_text():
    assert len(escape_md("x" * 1000, limit=50)) == 50


def test_markdown_puts_verdict_first_and_lists_regressions():
    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), question("B", "fail"))
    head = run(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), question("B"))
    text = render_markdown(head, compare(base, head))
    assert text.startswith("## rag-ci: ❌ 1 regression")
    # one row per question, its failing metrics folded into one cell
    assert "| A | a | hit&#64;k 1→0 |" in text
    assert "### Gains (1)" in text and "| B |" in text
    assert text.index("### Retrieval (1)") < text.index("### Gains")


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
    head = run(
        *[
            question(f"Q{i:04d}", "fail", answer="x" * 300, metrics=[metric("hit_at_k", 0.0, 1.0)])
            for i in range(600)
        ]
    )
    text = render_markdown(head, compare(base, head), max_chars=20000)
    assert len(text) <= 20000 and "more" in text


def test_html_is_standalone_with_an_inline_chart():
    head = run(question("A"), question("B", "fail"))
    page = render_html(head, compare(run(question("A"), question("B")), head))
    assert (
        page.startswith("<!doctype html>")
        and "<svg" in page
        and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    )


# --- every printed expression is escaped (issue: untrusted text never becomes markup) ---------

import re  # noqa: E402

import jinja2  # noqa: E402
from jinja2 import nodes  # noqa: E402

from rag_ci.core.reporting.render import escape_notice  # noqa: E402

# accept_yaml: a fenced block longer than any backtick run inside, its values JSON-quoted.
# log_block: a fence longer than any backtick run inside
ESCAPING_FILTERS = {
    "u",
    "ucode",
    "quote",
    "url",
    "ids",
    "accept_yaml",
    "log_block",
}
NUMERIC_FILTERS = {
    "num",
    "delta",
    "ms",
    "usd",
    "pct",
    "length",
    "int",
    "count",
    "budget",
    "pp",
    "pvalue",
    "pp_delta",
    "latency_delta",
}
# Macros of the report (their bodies are walked like the rest of the template).
TEMPLATE_MACROS = {"report_ref", "more_ids", "id_cell", "change_row", "change_rows"}


def _printed_safely(node: nodes.Node) -> bool:
    if (
        isinstance(node, nodes.Call)
        and isinstance(node.node, nodes.Name)
        and node.node.name in TEMPLATE_MACROS
    ):
        return True
    if isinstance(node, nodes.TemplateData | nodes.Const):
        return True  # the template's own text and literals
    if isinstance(node, nodes.CondExpr):
        return _printed_safely(node.expr1) and (node.expr2 is None or _printed_safely(node.expr2))
    if isinstance(node, nodes.Filter):
        if node.name in ESCAPING_FILTERS | NUMERIC_FILTERS:
            return True
        # "%+.0f" | format(number): a numeric conversion prints digits only
        if node.name == "format" and isinstance(node.node, nodes.Const):
            return not re.search(r"%[^%]*[sr]", node.node.value)
    return False


def raw_prints(template_name: str) -> list[str]:
    env = jinja2.Environment(loader=jinja2.PackageLoader("rag_ci", "templates"))
    source = env.loader.get_source(env, template_name)[0]
    tree = env.parse(source)
    return [
        f"line {child.lineno}: {source.splitlines()[child.lineno - 1].strip()[:120]}"
        for output in tree.find_all(nodes.Output)
        for child in output.nodes
        if not _printed_safely(child)
    ]


@pytest.mark.parametrize(
    "template", ["report.md.j2", "noise.md.j2", "before_after.md.j2", "accepted.md.j2", "not_evaluated.md.j2"]
)
def test_every_expression_printed_in_the_markdown_report_goes_through_an_escaping_or_numeric_filter(template):
    assert raw_prints(template) == []


def test_the_report_macros_are_the_ones_the_raw_print_check_trusts():
    env = jinja2.Environment(loader=jinja2.PackageLoader("rag_ci", "templates"))
    tree = env.parse(env.loader.get_source(env, "report.md.j2")[0])
    assert {m.name for m in tree.find_all(nodes.Macro)} == TEMPLATE_MACROS


def test_the_raw_print_check_catches_a_raw_expression():
    env = jinja2.Environment()
    tree = env.parse("{{ notice }} {{ x | u }} {{ n | int }} {{ 's' if y }} {{ x | join(', ') }}")
    unsafe = [c for o in tree.find_all(nodes.Output) for c in o.nodes if not _printed_safely(c)]
    assert [type(c).__name__ for c in unsafe] == ["Name", "Filter"]


def test_the_html_report_autoescapes_and_marks_nothing_safe_by_itself():
    env = jinja2.Environment(loader=jinja2.PackageLoader("rag_ci", "templates"))
    source = env.loader.get_source(env, "report.html.j2")[0]
    tree = env.parse(source)
    assert not [f for f in tree.find_all(nodes.Filter) if f.name == "safe"]
    assert not list(tree.find_all(nodes.EvalContextModifier)), (
        "an {% autoescape %} block in the HTML template"
    )


HOSTILE_MODEL = (
    "gpt-4o-2024-08-06 @acme/maintainers ![x](https://evil.example/i.png) <img src=x onerror=alert(1)>"
)


def test_a_notice_built_from_config_text_is_escaped_but_keeps_rag_cis_code_spans():
    notice = f"Not compared: the judge changed (`judge.model`: `old` → {HOSTILE_MODEL})\nrun with `rebaseline: true`"
    text = render_markdown(run(question("A")), notice=notice)
    quoted = [line for line in text.splitlines() if line.startswith(">")]
    assert len(quoted) == 2  # one block quote, line for line
    for raw in ("@acme", "![x]", "<img", "](https"):
        assert raw not in text, raw
    assert "&#64;acme/maintainers" in text and "&lt;img" in text
    assert "`https://evil.example/i.png)`" in text  # a bare URL is shown as code, not a link
    assert "`judge.model`" in text and "`rebaseline: true`" in text


def test_escape_notice_survives_backticks_the_attacker_chose():
    out = escape_notice("a ``` b ` @x <b> ` `")
    assert "<b>" not in out and "@x" not in out.replace("`@x", "")  # inside a code span @x is inert


def test_bare_urls_in_reasons_are_code_not_links():
    bad = question("A", "fail", metrics=[metric("kw", 0.0)])
    bad.metrics["kw"].reason = "see https://evil.example/phish?a=1|2 and www.evil.example now"
    head = run(bad)
    md = render_markdown(head, compare(run(question("A", metrics=[metric("kw", 1.0)])), head))
    assert "`https://evil.example/phish?a=1\\|2`" in md and "`www.evil.example`" in md
    stripped = re.sub(r"`[^`]*`", "", md)
    assert "https://evil" not in stripped and "www.evil" not in stripped


def test_a_judge_model_from_the_config_cannot_mention_or_inject_in_the_footer():
    from rag_ci.core.results import JudgeFingerprint

    head = run(question("A"))
    head.meta.judge = JudgeFingerprint(
        provider="openai",
        model=HOSTILE_MODEL,
        temperature=0.0,
        deepeval_version="x",
        metrics={},
        prompt_hash="x",
    )
    text = render_markdown(head)
    footer = text.strip().splitlines()[-1]
    assert "@acme" not in footer and "<img" not in footer and "![x]" not in footer


def test_a_bootstrap_report_with_1200_failing_questions_fits_the_limit():
    long_id = "checkout-flow-refund-policy-question-"  # ids of real sets are long: 1,200 rows > 60,000 chars
    head = run(
        *(question(f"{long_id}{i:04d}", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]) for i in range(1200))
    )
    text = render_markdown(head, None, max_chars=60000)
    assert len(text) <= 60000 and "Failing questions (1200)" in text
    assert f"{long_id}0000 |" in text and f"{long_id}1199 |" not in text  # rows cut to fit


def test_a_report_with_10k_gains_fits_the_limit():
    base = run(*(question(f"G{i:05d}", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]) for i in range(10000)))
    head = run(*(question(f"G{i:05d}", metrics=[metric("hit_at_k", 1.0, 1.0)]) for i in range(10000)))
    text = render_markdown(head, compare(base, head), max_chars=60000)
    assert len(text) <= 60000 and "10000 gains" in text
    assert "| G00000 |" in text and "| G09999 |" not in text


def test_a_report_with_many_regressions_lists_the_first_rows_and_names_the_rest():
    base = run(*(question(f"R{i:04d}", metrics=[metric("hit_at_k", 1.0, 1.0)]) for i in range(1500)))
    head = run(*(question(f"R{i:04d}", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]) for i in range(1500)))
    text = render_markdown(head, compare(base, head), max_chars=60000)
    assert len(text) <= 60000 and text.startswith("## rag-ci: ❌ 1500 regressions")
    assert "| R0000 |" in text and "** more (details in" in text
    assert all(f"R{i:04d}" in text for i in range(1500))


def test_the_prs_gate_changes_open_the_report_escaped_and_not_comparable_metrics_get_a_section():
    import dataclasses

    base = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), thresholds={"hit_at_k": 1.0})
    head = run(
        question("A", metrics=[metric("hit_at_k", 1.0, 1.0), metric("mrr", 0.9, 0.5)]),
        thresholds={"hit_at_k": 1.0, "mrr": 0.5},
    )
    comparison = dataclasses.replace(
        compare(base, head),
        policy_changes=("gate.fail_on any_regression → never", f"correctness.criteria {HOSTILE}"),
    )
    md = render_markdown(head, comparison)
    lines = md.splitlines()
    assert lines[2] == "> [!CAUTION]"  # a GitHub alert, not a grey quote
    assert (
        lines[3]
        .replace("\\", "")
        .startswith(
            "> **This PR changes the gate:** gate.fail_on any_regression → never; correctness.criteria &lt;script&gt;"
        )
    )
    assert "**Merging turns the gate off on main.**" in lines[3]
    assert "@everyone" not in md and "<script>" not in md
    assert "— 1/1 questions pass" in md  # the summary line is whole
    section = md[md.index("### Not comparable") :]
    assert "| mrr | not in the baseline |" in section
    html = render_html(head, comparison)
    assert "This PR changes the gate:" in html and "&lt;script&gt;" in html and "Not comparable (1)" in html


def test_an_html_payload_in_a_question_id_is_nowhere_raw_in_the_comment_or_the_report():
    """Before: `<img src=x onerror=…>` as a question id survived raw in
    the PR comment (the accepted-file snippet). Every rendering of an id is inert, the snippet
    still YAML that reads back as the same id."""
    from ruamel.yaml import YAML

    payload = '<img src=x onerror=alert(1)><script>alert("x")</script>&amp;'
    hit = "hit_at_k"
    ids = [payload + kind for kind in ("REG", "NEW", "GAIN", "LEAK", "GONE", "EDIT")]
    base = run(
        question(ids[0], metrics=[metric(hit, 1.0, 1.0)]),
        question(ids[2], "fail", metrics=[metric(hit, 0.0, 1.0)]),
        question(ids[3]),
        question(ids[4]),
        question(ids[5]),
    )
    head = run(
        question(ids[0], "fail", metrics=[metric(hit, 0.0, 1.0)]),
        question(ids[1], "fail", metrics=[metric(hit, 0.0, 1.0)]),
        question(ids[2], metrics=[metric(hit, 1.0, 1.0)]),
        question(ids[3], "routing_error"),
        question(ids[5], hash_="x"),
    )
    comparison = compare(base, head)
    for text in (
        render_markdown(head, comparison, notice=f"leak in {payload}"),
        render_markdown(head, None),
        render_html(head, comparison),
    ):
        assert not re.search(r"<(img|script)", text, re.IGNORECASE), text[
            max(0, text.find("<img") - 200) : text.find("<img") + 80
        ]
    snippet = render_markdown(head, comparison).split("```yaml\n", 1)[1].split("```", 1)[0]
    assert YAML(typ="safe").load("accepted:\n" + snippet)["accepted"][0]["id"] == ids[0]


def test_bidi_and_zero_width_controls_of_an_answer_are_shown_in_the_comment_never_applied():
    from rag_ci.core.reporting.render import code_span, escape_md

    shown = escape_md("The limit is 10\u202e05\u202c ms\u200b, see https://x.example/\u2066a")

    assert not any(c in shown for c in "\u202e\u202c\u200b\u2066")
    assert "10&lt;U+202E&gt;05&lt;U+202C&gt; ms&lt;U+200B&gt;" in shown
    assert "\\u2066" in shown and "\u2066" not in code_span("a\u2066b")
