"""Every question that fails the gate is named in the PR comment, whatever its size:
rows and details are cut to fit GitHub's 65,536 characters, the ids never are."""

import re

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Context
from rag_ci.github.comments import GITHUB_COMMENT_LIMIT, comment_body

LONG_ID = "checkout-flow-refund-policy-question-"
JUDGED = ("faithfulness", "correctness", "answer_relevancy")


def _judged(qid: str, score: float, verdict: str, answer: str):
    q = question(qid, verdict, answer=answer, metrics=[metric(m, score, 0.5, kind="judge") for m in JUDGED])
    for m in q.metrics.values():
        m.reason = (f"The answer to {qid} contradicts the retrieved policy text; " * 6)[:250]
    q.contexts = [Context(text="chunk", doc_id=f"policies/refunds-{qid}-{r}.md") for r in range(5)]
    if verdict == "fail":
        q.failure_stage = "generation"
    return q


def _ids_named(text: str, ids: list[str]) -> list[str]:
    return [i for i in ids if not re.search(re.escape(i) + r"(?!\d)", text)]


def test_500_questions_with_100_judged_regressions_and_250_character_reasons_name_every_regression_within_the_limit():
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
    comparison = compare(base, head)
    assert len(comparison.regressions) == 100
    body = comment_body(render_markdown(head, comparison, report_url="https://github.com/o/r/actions/runs/1"))
    assert len(body) <= GITHUB_COMMENT_LIMIT
    assert _ids_named(body, ids[:100]) == []
    assert "truncated" not in body
    assert "[the full HTML report](https://github.com/o/r/actions/runs/1)" in body


def test_10000_questions_with_2000_regressions_and_500_worse_name_every_one_within_the_limit():
    ids = [f"q-{i:05d}" for i in range(10000)]
    base = run(
        *(
            question(
                i,
                "fail" if 2000 <= n < 2500 else "pass",
                metrics=[metric("hit_at_k", 0.0 if 2000 <= n < 2500 else 1.0, 1.0), metric("mrr", 1.0, 0.5)],
            )
            for n, i in enumerate(ids)
        )
    )
    head = run(
        *(
            question(
                i,
                "fail",
                metrics=[metric("hit_at_k", 0.0, 1.0), metric("mrr", 0.0 if n >= 2000 else 1.0, 0.5)],
            )
            if n < 2500
            else question(i, metrics=[metric("hit_at_k", 1.0, 1.0), metric("mrr", 1.0, 0.5)])
            for n, i in enumerate(ids)
        )
    )
    comparison = compare(base, head)
    assert (len(comparison.regressions), len(comparison.worse)) == (2000, 500)
    text = render_markdown(head, comparison, report_path="rag-ci-out/report.html")
    assert len(comment_body(text)) <= GITHUB_COMMENT_LIMIT
    assert _ids_named(text, ids[:2500]) == []
    assert "`rag-ci-out/report.html`" in text


def test_when_rows_must_go_the_remaining_ids_are_listed_escaped_and_the_report_linked():
    hostile = "q|<b>@everyone"
    ids = [f"r{i:04d}" for i in range(300)] + [hostile]
    base = run(*(question(i, metrics=[metric("hit_at_k", 1.0, 1.0)]) for i in ids))
    head = run(*(question(i, "fail", answer="x" * 300, metrics=[metric("hit_at_k", 0.0, 1.0)]) for i in ids))
    text = render_markdown(head, compare(base, head), max_chars=12000, report_path="out/report.html")
    assert len(text) <= 12000
    assert _ids_named(text, ids[:300]) == []
    assert "q\\|&lt;b&gt;&#64;everyone" in text and "<b>" not in text and "@everyone" not in text
