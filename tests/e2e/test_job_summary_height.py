"""The job summary of a big failing run, as a release manager scrolls it: 1,500 questions, 300
regressions. It holds every row (the comment cannot), so it must be navigable: an index of the
groups at the top, one block of accepted-file entries per group (not 300 collapsed lines), and
a page under 8,000 px in a 1,280-px-wide browser (today: measured in the report of the change)."""

from __future__ import annotations

from summary_page import screenshot_height

from builders import metric, question, run
from gfm import body_rows, rendered
from rag_ci.action.outputs import summary_report
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_markdown
from rag_ci.core.results import Context

HIT, FAITH = "hit_at_k", "faithfulness"
REASON = (
    "The answer states a charging time of 7 hours, but the retrieved context gives 6.5 hours for the PowerPack 400 "
    "with the standard 2 A charger; the claim is not supported."
)


def _pair(i: int):
    """One question on the baseline and now: every fifth regresses (retrieval, then generation)."""
    qid, corpus = f"DU-{i:04d}", ("du2", "du3")[i % 2]
    chunk = Context(
        text=f"Chunk {i}: the PowerPack 400 charges in 6.5 hours with the 2 A charger.",
        doc_id=corpus,
        source=f"{corpus}/manual-{i % 40}.md#{i % 7}",
    )
    other = Context(
        text=f"Chunk {i}b: store the battery at 30 to 60 % in a dry room.",
        doc_id=corpus,
        source=f"{corpus}/storage-{i % 9}.md#2",
    )
    base = question(
        qid,
        corpora=(corpus,),
        answer="It takes 6.5 hours.",
        metrics=[metric(HIT, 1.0, 1.0), metric(FAITH, 0.9, 0.7, kind="answer")],
    )
    base.contexts = [chunk, other]
    if i % 5:
        head = base.model_copy(deep=True)
    elif i % 10 == 0:  # retrieval: the chunk is gone
        head = question(
            qid,
            "fail",
            corpora=(corpus,),
            answer="I could not find it.",
            metrics=[metric(HIT, 0.0, 1.0), metric(FAITH, 0.9, 0.7, kind="answer")],
        )
        head.contexts = [other]
    else:  # generation: same chunks, unfaithful answer
        head = question(
            qid,
            "fail",
            corpora=(corpus,),
            answer="It takes 7 hours.",
            metrics=[metric(HIT, 1.0, 1.0), metric(FAITH, 0.3, 0.7, kind="answer")],
        )
        head.metrics[FAITH].reason = REASON
        head.contexts = [chunk, other]
        head.failure_stage = "generation"
    return base, head


def _summary() -> str:
    pairs = [_pair(i) for i in range(1500)]
    base, head = run(*(b for b, _ in pairs)), run(*(h for _, h in pairs))
    head.meta.pr_number = 7
    comparison = compare(base, head)
    assert len(comparison.regressions) == 300
    return summary_report(
        lambda limit: render_markdown(
            head, comparison, max_chars=limit, report_url="https://example.test/run/1"
        )
    )


def test_the_summary_of_300_regressions_opens_with_an_index_of_its_groups_and_has_one_acceptance_block_per_group():
    md = _summary()
    root = rendered(md)
    index = next(p for p in root.find_all("p") if p.text().startswith("Groups:"))
    links = [(a.text(), a) for a in index.find_all("a")]
    assert [text for text, _ in links] == ["Retrieval (150)", "Generation (150)"]  # today: no index
    assert [h.text() for h in root.find_all("h3")][:2] == ["Retrieval (150)", "Generation (150)"]
    blocks = [s.text() for s in root.find_all("summary") if "accepted.yml" in s.text()]
    assert len(blocks) == 2, blocks[:3]  # today: 300 "Intended DU-0000? add to accepted.yml:" lines
    assert md.count("question_hash:") == 300  # every entry is still there to paste
    tables = [t for t in root.find_all("table") if "failing" in t.find_all("th")[2].text()]
    rows = [row for table in tables for row in body_rows(table)]
    # every row, which the comment cannot hold
    assert len(rows) == 300 and len({row[0] for row in rows}) == 300
    # GitHub's fragments of the headings
    assert "[Retrieval (150)](#retrieval-150) · [Generation (150)](#generation-150)" in md


def test_the_summary_of_300_regressions_is_under_8000_px_in_a_1280_px_wide_browser(tmp_path):
    height, shot = screenshot_height(_summary(), tmp_path)
    assert shot == height
    print(f"job summary of 1,500 questions, 300 regressions: {height} px tall at 1280 px wide")
    assert height < 8000, height  # today: 25,220 px
