"""The terminal view (rag_ci.cli.terminal): the markdown report's words, laid out for a terminal,
with untrusted text shown as text."""

from __future__ import annotations

from builders import metric, question, run
from rag_ci.cli.terminal import terminal_report
from rag_ci.gate import compare_runs


def test_untrusted_ids_and_reasons_are_text_never_markup_nor_terminal_escapes():
    evil = "Q[bold red]x[/] \x1b[2J\x1b]0;pwned\x07"
    base = run(question(evil, metrics=[metric("hit_at_k", 1.0)]))
    head = run(
        question(
            evil,
            "fail",
            metrics=[metric("hit_at_k", 0.0).model_copy(update={"reason": "*not* | <b>bold</b> +5"})],
        )
    )
    outcome = compare_runs(base, head)

    shown = terminal_report(outcome.head, outcome.comparison, width=200, color=False)

    assert "\x1b" not in shown and "\x07" not in shown
    assert "Q[bold red]x[/] \\x1b[2J\\x1b]0;pwned\\x07" in shown  # markup printed as typed; escapes visible
    assert "*not* | <b>bold</b> +5" in shown  # no markdown escaping either: `\+`, `\|`, `&lt;`
    assert shown.startswith("rag-ci: ❌ 1 regression")


def test_a_run_without_baseline_shows_its_counts_and_the_questions_not_passing():
    head = run(
        question("Q1", metrics=[metric("hit_at_k", 1.0)]),
        question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)]),
    )
    shown = terminal_report(head, None, width=120, color=False)
    assert "no baseline to compare with" in shown
    assert "1/2 pass, 1 fail" in shown and "not passing: Q2" in shown
