"""The pure side of `questions generate`: passages, keywords, typos, the mix, duplicates."""

import pytest

from builders import EXAMPLES
from rag_ci.core.questionset.dedupe import Known, dedupe, route_of
from rag_ci.core.questionset.draft_plan import (
    ADVERSARIAL,
    DocumentPassages,
    mix,
    plan_drafts,
    same_topic_pairs,
)
from rag_ci.core.questionset.draft_text import misspell, normalise, pick_keywords
from rag_ci.core.questionset.passages import cut_passages
from rag_ci.core.questionset.similarity import Texts, similarity_matrix


def similarity(a: str, b: str) -> float:
    """One pair of the matrix dedupe scores with."""
    vocabulary: dict[str, str] = {}
    return float(similarity_matrix(Texts.of([a], vocabulary), Texts.of([b], vocabulary))[0, 0])


BATTERY = (EXAMPLES / "corpora" / "du2" / "docs" / "battery.md").read_text(encoding="utf-8")


def example_documents():
    out = []
    for corpus in ("du2", "du3"):
        for path in sorted((EXAMPLES / "corpora" / corpus / "docs").glob("*.md")):
            name = f"docs/{path.name}"
            out.append(
                DocumentPassages(
                    corpus, name, tuple(cut_passages(corpus, name, path.read_text(encoding="utf-8")))
                )
            )
    return out


def test_a_document_is_cut_into_its_sections_verbatim_and_the_same_way_every_time():
    passages = cut_passages("du2", "docs/battery.md", BATTERY)
    assert [p.heading for p in passages] == ["Battery and charging (DU-2)", "Charging", "Storage"]
    assert all(p.text in BATTERY for p in passages)  # verbatim: keywords found in it are the document's
    assert [p.hash for p in cut_passages("du2", "docs/battery.md", BATTERY)] == [p.hash for p in passages]
    # where it is from counts
    assert passages[1].hash != cut_passages("du3", "docs/battery.md", BATTERY)[1].hash


def test_long_sections_are_split_between_paragraphs_and_short_ones_join_the_next():
    text = (
        "# T\n\n"
        + "\n\n".join(" ".join(f"w{i}{j}" for j in range(60)) + "." for i in range(5))
        + "\n\n## Tiny\n\nfew words.\n"
    )
    passages = cut_passages("c", "d.md", text, max_words=130, min_words=10)
    # title + 2 paragraphs, 2 paragraphs, 1 + the short tail
    assert [p.words for p in passages] == [
        122,
        120,
        64,
    ]
    assert passages[-1].text.endswith("few words.")
    one = cut_passages(
        "c", "d.md", " ".join(f"Sentence {i} ends here." for i in range(100)), max_words=50, min_words=5
    )
    assert max(p.words for p in one) <= 50 and " ".join(p.text for p in one).count("ends here.") == 100


def test_keywords_are_salient_terms_of_the_reference_found_verbatim_in_the_passage():
    passage = "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours. Charge only between 0 °C and 40 °C."
    assert pick_keywords(
        "The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.", [passage]
    ) == ("2 A", "6.5 hours", "PowerPack 400")
    # "7 hours" and "Lumen Tool" are not in the passage: only a word of it is left
    assert pick_keywords("It takes 7 hours with the Lumen Tool.", [passage]) == ("hours",)
    can = (
        "The PowerPack 625 communicate over a CAN bus with a bit rate of 500 kbit/s, at least 3 revolutions."
    )
    # "625 communicate" is no unit
    assert pick_keywords(can, [can]) == (
        "500 kbit/s",
        "3 revolutions",
        "CAN",
        "PowerPack 625",
    )
    cross = pick_keywords(
        "DU-2: 400 Wh; DU-3: 625 Wh.", ["a 36 V battery of 400 Wh", "a 48 V battery of 625 Wh"]
    )
    assert set(cross) == {"400 Wh", "625 Wh"}  # one from each corpus's passage
    assert (
        2
        <= len(
            pick_keywords(
                "Hold MODE and MINUS on the D1 display for 8 seconds.",
                ["Hold MODE and MINUS on the D1 display for 8 seconds."],
            )
        )
        <= 5
    )


def test_misspelling_is_seeded_and_leaves_numbers_and_names_alone():
    question = "How long does the PowerPack 400 charger take to reach 80 percent?"
    typed = misspell(question, "seed-1")
    assert typed == misspell(question, "seed-1") and typed != question
    assert "PowerPack 400" in typed and "80" in typed and typed.endswith("??")
    assert similarity(question, typed) < 1.0


def test_near_duplicates_are_found_through_case_punctuation_and_a_few_typos():
    assert normalise("What is the  Peak-Torque?") == "what is the peak torque"
    assert (
        similarity("What is the peak torque of the drive unit?", "what is the peak torqe of the drive unit")
        > 0.9
    )
    assert similarity("What is the peak torque of the drive unit?", "How do I pair the app?") < 0.5


def test_duplicates_of_the_set_and_among_drafts_are_dropped_with_the_reason_but_not_across_corpora():
    existing = [Known("DU2-TORQUE", "What is the peak torque of the drive unit?", route_of(["du2"], False))]
    drafts = [
        ("a", "What is the peak torque of the drive unit ?", ["du2"]),  # same words
        ("b", "What is the peak torque of the drive unit?", ["du3"]),  # another corpus: a question of its own
        ("c", "How long does the charger take to fill the battery?", ["du2"]),
        ("d", "How long does the charger take to fill a battery?", ["du2"]),  # near-duplicate of c
        ("e", "Who won the world cup?", []),
    ]
    kept, dropped = dedupe(
        drafts, existing=existing, describe=lambda d: (d[0], d[1], route_of(d[2], not d[2]))
    )
    assert [d[0] for d in kept] == ["b", "c", "e"]
    assert [(x.item[0], x.reason()) for x in dropped] == [
        ("a", "same words as DU2-TORQUE"),
        ("d", "near-duplicate of c (0.96)"),
    ]


@pytest.mark.parametrize(
    "in_document, pairs, fraction",
    [(75, 8, 0.25), (75, 0, 0.25), (3, 1, 0.2), (10, 10, 0.5), (40, 2, 1.0), (1, 0, 0.25)],
)
def test_the_mix_is_at_least_the_adversarial_share_asked_for(in_document, pairs, fraction):
    counts = mix(in_document, pairs, fraction)
    total = sum(counts.values())
    adversarial = total - counts["plain"]
    assert adversarial >= fraction * total - 1e-9
    assert counts["plain"] + counts["misspelt"] + counts["vague"] == in_document
    assert counts["cross_corpus"] <= pairs and counts["out_of_scope"] >= 1
    assert mix(in_document, pairs, 0.0) == {
        "plain": in_document,
        "misspelt": 0,
        "vague": 0,
        "cross_corpus": 0,
        "out_of_scope": 0,
    }


def test_the_example_plan_pairs_the_two_manuals_pages_on_the_same_topic_and_is_reproducible():
    documents = example_documents()
    pairs = same_topic_pairs(documents)
    assert ("docs/battery.md", "docs/battery.md") in [(a.path, b.path) for a, b in pairs]
    assert all(a.corpus != b.corpus for a, b in pairs)
    plan = plan_drafts(
        documents, per_document=3, adversarial=0.25, seed=7, descriptions={"du2": "DU-2", "du3": "DU-3"}
    )
    assert plan.documents == 25 and plan.total == sum(job.goldens for job in plan.jobs)
    assert (
        plan.adversarial >= 0.25 * plan.total
        and plan.wanted["cross_corpus"] >= 1
        and plan.wanted["out_of_scope"] >= 1
    )
    assert sum(j.goldens for j in plan.jobs if j.kind in ("document", "vague")) == 25 * 3
    cross = [j for j in plan.jobs if j.kind == "cross_corpus"]
    assert all(len({p.corpus for p in j.passages}) == 2 for j in cross)
    assert plan == plan_drafts(
        documents, per_document=3, adversarial=0.25, seed=7, descriptions={"du2": "DU-2", "du3": "DU-3"}
    )
    other = plan_drafts(
        documents, per_document=3, adversarial=0.25, seed=8, descriptions={"du2": "DU-2", "du3": "DU-3"}
    )
    assert [j.evolution for j in other.jobs] != [j.evolution for j in plan.jobs]
    out_of_scope = next(j for j in plan.jobs if j.kind == "out_of_scope")
    assert any("DU-2" in line for line in out_of_scope.context) and not out_of_scope.passages
    assert set(plan.wanted) - {"plain"} == ADVERSARIAL


def test_a_plan_without_cross_corpus_drafts_says_why():
    # Before: no cross-corpus drafts, and no hint why.
    documents = example_documents()
    assert (
        plan_drafts(documents, per_document=1, adversarial=0.25, seed=0, descriptions={}).cross_corpus_note
        == ""
    )
    du3 = [d for d in documents if d.corpus == "du3"]
    assert plan_drafts(du3, per_document=1, adversarial=0.25, seed=0, descriptions={}).cross_corpus_note == (
        "no cross-corpus drafts: they need documents of two corpora, and only du3 is drafted from (--corpus)"
    )
    unrelated = [
        DocumentPassages(
            "a", "x.md", tuple(cut_passages("a", "x.md", "The charger fills the battery in six hours."))
        ),
        DocumentPassages(
            "b", "y.md", tuple(cut_passages("b", "y.md", "The orchid needs water once a week in summer."))
        ),
    ]
    plan = plan_drafts(unrelated, per_document=2, adversarial=0.25, seed=0, descriptions={})
    assert plan.wanted["cross_corpus"] == 0 and plan.cross_corpus_note == (
        "no cross-corpus drafts: no two documents of different corpora share a topic (the closest, a/x.md and b/y.md, share "
        "0% of their words; 30% or the same file name make a topic)"
    )
    assert plan_drafts(
        unrelated, per_document=2, adversarial=0.0, seed=0, descriptions={}
    ).cross_corpus_note.endswith("(--adversarial 0)")


def test_two_questions_sharing_only_their_frame_are_not_near_duplicates():
    asked = [
        ("t", "How does the peak torque differ between the DU-2 and the DU-3?", ["du2"]),
        ("f", "How do firmware updates differ between the DU-2 and the DU-3?", ["du2"]),
    ]
    kept, dropped = dedupe(asked, existing=[], describe=lambda d: (d[0], d[1], route_of(d[2], False)))
    assert [d[0] for d in kept] == ["t", "f"] and dropped == []


def test_the_same_words_reordered_are_a_near_duplicate_not_the_same_words():
    existing = [Known("Q1", "Is the peak torque limited?", route_of(["du2"], False))]
    kept, dropped = dedupe(
        [("a", "Is the torque peak limited?", ["du2"])],
        existing=existing,
        describe=lambda d: (d[0], d[1], route_of(d[2], False)),
    )
    assert kept == [] and dropped[0].reason() == "near-duplicate of Q1 (1.00)"


def test_the_similarity_matrix_scores_every_pair_as_the_pairwise_similarity_does():
    from rag_ci.core.questionset.similarity import Texts, similarity_matrix

    a = ["What is the peak torque?", "How do I pair the app?", "Wie heißt der Fehler E-07?"]
    b = ["what is the peak torqe", "How do I pair the app", "", "app the pair I do how"]
    vocabulary: dict[str, str] = {}
    matrix = similarity_matrix(Texts.of(a, vocabulary), Texts.of(b, vocabulary))
    assert matrix.shape == (3, 4)
    assert [[round(matrix[i, j], 6) for j in range(4)] for i in range(3)] == [
        [round(similarity(x, y), 6) for y in b] for x in a
    ]
    assert matrix[1, 1] == 1.0 and 0.99 < matrix[1, 3] < 1.0 and matrix[0, 2] == 0.0
