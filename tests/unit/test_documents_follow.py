"""Questions follow their documents: a regression whose cited document changed is labelled, the
history records each corpus's documents, and results.json files without fingerprints still load."""

from builders import EXAMPLES, metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.comparison.history import history_line, render_trend_text, trend
from rag_ci.core.reporting.render import render_markdown
from rag_ci.files.results_file import load_results

LABEL = "changed in this PR: the reference may be stale"


def cited(q, **fingerprints):
    q.source_fingerprints = fingerprints
    return q


def test_a_regression_whose_cited_document_changed_is_labelled_and_still_gates():
    base = run(
        cited(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), **{"du2/battery.md": "f1"}),
        cited(question("B", metrics=[metric("hit_at_k", 1.0, 1.0)]), **{"du2/overview.md": "f2"}),
    )
    head = run(
        cited(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), **{"du2/battery.md": "f9"}),
        cited(question("B", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), **{"du2/overview.md": "f2"}),
    )
    comparison = compare(base, head)
    assert comparison.verdict == "fail" and len(comparison.regressions) == 2
    by_id = {c.id: c for c in comparison.regressions}
    assert by_id["A"].source_changed == ("du2/battery.md",) and by_id["B"].source_changed == ()
    text = render_markdown(head, comparison)
    # Its own group: the changed document decides the stage, said in A's row, not B's.
    assert "### Source changed (1)" in text and "### Retrieval (1)" in text
    row = next(line for line in text.splitlines() if line.startswith("| A |"))
    assert f"du2/battery.md {LABEL}" in row and text.count(LABEL) == 1
    assert list(comparison.to_dict()["regressions"][0]["source_changed"]) == ["du2/battery.md"]


def test_a_removed_document_counts_as_changed_and_a_baseline_without_fingerprints_as_unknown():
    removed = run(
        cited(question("A", "fail", metrics=[metric("hit_at_k", 0.0, 1.0)]), **{"du2/battery.md": None})
    )
    base = run(cited(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]), **{"du2/battery.md": "f1"}))
    assert compare(base, removed).regressions[0].source_changed == ("du2/battery.md",)
    old = run(question("A", metrics=[metric("hit_at_k", 1.0, 1.0)]))  # written before fingerprints
    comparison = compare(old, removed)
    assert comparison.regressions[0].source_changed == () and LABEL not in render_markdown(
        removed, comparison
    )


def test_the_committed_example_baseline_loads_without_fingerprints():
    baseline = load_results(EXAMPLES / "baseline" / "results.json")
    assert baseline.meta.corpus_fingerprints == {} and all(
        q.source_fingerprints == {} for q in baseline.questions
    )


def test_the_history_records_each_corpus_fingerprint_and_the_trend_shows_when_documents_changed():
    lines = []
    for sha, du2 in (("a1", "x"), ("b2", "x"), ("c3", "y")):
        result = run(question("Q1", metrics=[metric("hit_at_k", 1.0)]), sha=sha)
        result.meta.corpus_fingerprints = {"du2": du2, "du3": "z"}
        lines.append(history_line(result))
    assert lines[0]["corpus_fingerprints"] == {"du2": "x", "du3": "z"}
    points = trend(lines)
    assert [p["documents_changed"] for p in points] == [[], [], ["du2"]]
    assert "(documents: du2)" in render_trend_text(points).splitlines()[-3]
    older = dict(lines[0])
    del older["corpus_fingerprints"]  # a line written before rag-ci recorded them
    assert trend([older, lines[2]])[1]["documents_changed"] == []
