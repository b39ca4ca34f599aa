"""A run that stopped before it could evaluate (issue 55): its headline shows a quoted name as
code, not as backslashed backticks, and ends at a clause of the cause, not in the middle of a
quoted command; its check run's title names the cause. Read as GitHub renders it (cmark-gfm)."""

from __future__ import annotations

from gfm import rendered
from rag_ci.core.reporting.alerts import headline_cause
from rag_ci.core.reporting.render import render_not_evaluated

CAUSE = (
    "target.entry `app:answer`: cannot import app (ModuleNotFoundError: No module named 'app'); "
    "the build step `pip install -r requirements.txt` failed with exit 1 after 30 s; see the log "
    "of the workflow run for the whole output of the step"
)


def test_the_headline_shows_a_quoted_name_as_code_and_ends_at_a_clause():
    md = render_not_evaluated(CAUSE)
    assert "\\`" not in md.splitlines()[0]  # before: "target.entry \\`app:answer\\`: …"
    [h2] = rendered(md).find_all("h2")
    assert [c.text() for c in h2.find_all("code")] == ["app:answer"]
    assert h2.text() == (
        "rag-ci: ⛔ not evaluated — target.entry app:answer: cannot import app "
        "(ModuleNotFoundError: No module named 'app') …"
    )  # before: "… the build step `pip install -r…" (cut inside the quoted command)


def test_code_in_a_cause_stays_inert():
    md = render_not_evaluated("bad entry `<img src=x onerror=alert(1)> [x](http://evil)`; the rest")
    [h2] = rendered(md).find_all("h2")
    assert not h2.find_all("img") and not h2.find_all("a")
    assert h2.find_all("code")[0].text() == "<img src=x onerror=alert(1)> [x](http://evil)"


def test_a_short_cause_is_whole_and_the_check_title_has_its_first_clause():
    assert headline_cause("build step failed (exit 3)") == "build step failed (exit 3)"
    assert headline_cause(CAUSE, limit=100) == (
        "target.entry `app:answer`: cannot import app (ModuleNotFoundError: No module named 'app') …"
    )
