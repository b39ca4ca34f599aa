"""A run that replaces the baseline (the action on main, a re-baseline) compares with nothing on
purpose: its comment, summary and check run say it is the new baseline, never "🟡 no baseline to
compare with" (issue 55: a re-baseline run was still headed so). Read as GitHub renders it."""

from __future__ import annotations

from builders import metric, question, run
from gfm import rendered
from rag_ci.action.annotations import check_text
from rag_ci.core.reporting.render import render_markdown

HIT = "hit_at_k"


def _head():
    return run(
        question("Q1", metrics=[metric(HIT, 1.0, 1.0)]),
        question("Q2", "fail", metrics=[metric(HIT, 0.0, 1.0)]),
    )


def test_a_run_that_makes_the_baseline_is_headed_as_the_new_baseline():
    [h2] = rendered(render_markdown(_head(), None, made_baseline=True)).find_all("h2")
    assert (
        h2.text() == "rag-ci: 📌 new baseline: 1/2 questions pass"
    )  # before: "🟡 no baseline to compare with"


def test_its_check_run_says_so_too():
    title, summary = check_text(
        _head(), None, [], "https://github.example/acme/rag/actions/runs/1", made_baseline=True
    )
    assert title == "rag-ci: 📌 new baseline: 1/2 questions pass"
    assert summary.startswith("Nothing was compared: this run is the new baseline.")


def test_a_pull_request_without_a_baseline_still_says_there_is_none():
    [h2] = rendered(render_markdown(_head(), None)).find_all("h2")
    assert h2.text() == "rag-ci: 🟡 no baseline to compare with"
