"""What a release manager reads in the summary, the annotations, the terminal and the
baseline lines: each test quotes the review's evidence it fixes and failed on the code before
the fix. Markdown is read as GitHub renders it (cmark-gfm, tests/gfm.py)."""

from __future__ import annotations

from builders import metric, question, run
from gfm import rendered
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Context

KW, HIT = "keyword_coverage", "hit_at_k"

FULL = "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours. Charge only between 0 °C and 40 °C."
EDITED = "The standard 2 A charger fills an empty PowerPack 400 in 7 hours. Charge only between 0 °C and 40 °C."


def _asked(qid: str, contexts: list[Context], *, passed: bool, fingerprint: str | None = None):
    q = question(qid, "pass" if passed else "fail", corpora=("du2",), answer="6.5 hours" if passed else "7 hours",
                 metrics=[metric(HIT, 1.0, 1.0), metric(KW, 1.0 if passed else 0.0, 0.6, kind="answer")])
    q.keywords = ["6.5 hours"]
    q.contexts = contexts
    if fingerprint:
        q.source_fingerprints = {"du2/battery.md": fingerprint}
    q.failure_stage = None if passed else "generation"
    return q


def _before_after(md: str) -> str:
    [details] = [d for d in rendered(md).find_all("details") if d.text().startswith("Before and after")]
    return details.text()


# --- "was cut" only when the chunk's text is gone ---------------------------------------------

def test_an_edited_cited_document_shows_the_chunks_text_change_never_that_it_was_cut():
    chunk = "du2/battery.md#1"
    base = run(_asked("CHARGE", [Context(text=FULL, doc_id="du2", source=chunk)], passed=True, fingerprint="f1"))
    head = run(_asked("CHARGE", [Context(text=EDITED, doc_id="du2", source=chunk)], passed=False, fingerprint="f2"))
    text = _before_after(render_markdown(head, compare(base, head)))
    assert "was cut" not in text  # today: "retrieval not what it was: the chunk that held “6.5 hours” … was cut"
    assert "the chunk that held “6.5 hours” (du2/battery.md#1) now reads “… in 7 hours. …” where it read “… in 6.5 hours. …”" in text


def test_a_source_naming_a_document_never_says_another_of_its_chunks_was_cut():
    doc = "du2/battery.md"  # the app maps `source` to the file: every chunk of it has this id
    other = "Store the battery at 30 to 60 % charge in a dry room; check it every three months."
    base = run(_asked("CHARGE", [Context(text=FULL, doc_id="du2", source=doc)], passed=True))
    head = run(_asked("CHARGE", [Context(text=other, doc_id="du2", source=doc)], passed=False))
    [change] = compare(base, head).regressions
    assert change.retrieval_evidence[0] == "the chunk that held “6.5 hours” (du2/battery.md) is no longer retrieved"  # today: "… was cut"
    assert not any("other text" in e for e in change.retrieval_evidence)


def test_a_chunk_re_cut_under_its_id_so_that_its_words_are_gone_still_says_it_was_cut():
    chunk = "du2/battery.md#1"
    cut = "battery sits on the down tube. Charging The standard 2 A charger fills an empty PowerPack 400 in 6.5"
    base = run(_asked("CHARGE", [Context(text=FULL, doc_id="du2", source=chunk)], passed=True))
    head = run(_asked("CHARGE", [Context(text=cut, doc_id="du2", source=chunk)], passed=False))
    [change] = compare(base, head).regressions
    assert change.retrieval_evidence[0] == "the chunk that held “6.5 hours” (du2/battery.md#1) was cut"
