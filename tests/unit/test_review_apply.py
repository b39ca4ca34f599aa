"""`questions apply` on realistic question files: every comment and blank line that does not
belong to a rejected draft stays where it was; ids match across Unicode normal forms; an
entry without the hash the page recorded is refused."""

from __future__ import annotations

import unicodedata

import pytest

from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.review.draft_review import apply_reviewed, parse_reviewed
from rag_ci.errors import ValidationError

# A file a team has lived with: a header, comments above, between and after questions,
# inline comments, blank lines, a block-scalar reference holding a `#` line, drafts in between.
REALISTIC = """\
# Question set of the DU manuals.
# Owner: docs team.

version: 4

questions:
  # --- kept by hand -------------------------------------------------------
  - id: DU2-BATTERY-01   # the charger question
    question: "How long does the charger take?"
    reference: |
      6.5 hours.
      # not a comment: part of the reference
    doc_id: du2
    sources: ["du2/battery.md"]

  # drafted by `rag-ci questions generate` (writer fake, 2026-05-01)
  - id: DU2-BATTERY-02
    question: How long does the standard charger take?
    reference: The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.
    doc_id: du2
    sources: [du2/battery.md]
    keywords: [2 A, 6.5 hours]   # checked against the passage
    tags: [generated]
    status: draft
    provenance: {writer: fake, date: '2026-05-01', passage_hash: d4bb9430657b5f31}

  # the next one is a misspelt draft; this comment is about DU2-BATTERY-04 too
  - id: DU2-BATTERY-03
    question: how long does charrging take ??
    reference: About 6.5 hours with the 2 A charger.   # a rejected draft's own comment
    doc_id: du2
    sources: [du2/battery.md]
    # a comment inside the rejected draft
    tags: [generated, adversarial, misspelt]
    status: draft
    provenance: {writer: fake, date: '2026-05-01', passage_hash: d4bb9430657b5f31}

  # about DU2-BATTERY-04: the 2 A charger only
  - id: DU2-BATTERY-04
    question: Which charger fills the PowerPack 400?
    reference: The standard 2 A charger.
    doc_id: du2
    sources: [du2/battery.md]
    tags: [generated]
    provenance: {writer: fake, date: '2026-05-01', passage_hash: d4bb9430657b5f31}
    status: draft   # status last, with a comment
  # after DU2-BATTERY-04, before the out-of-scope block

  - id: OOS-01
    question: Which chess opening suits a beginner?
    tags: [generated, adversarial, out_of_scope]
    expect: refusal
    status: draft
    provenance: {writer: fake, date: '2026-05-01'}
# the end of the set: add new questions above
"""


def _drafts(text: str) -> dict:
    parsed = parse_question_set(text, "q.yml", {"du2", "du3"}, allow_drafts=True)
    return {q.id: q for q in parsed.questions if q.status == "draft"}


def _reviewed(text: str, decisions: dict[str, str], reviewer: str = "ana") -> str:
    drafts = _drafts(text)
    lines = [f"reviewer: {reviewer}", "drafts:"]
    for qid, decision in decisions.items():
        lines += [
            f'  - id: "{qid}"',
            f'    hash: "{drafts[unicodedata.normalize("NFC", qid)].content_hash}"',
            f"    decision: {decision}",
        ]
    return "\n".join(lines) + "\n"


def _comment_and_blank_lines(text: str) -> list[str]:
    """Every comment (whole-line or inline) and blank line, in order."""
    found = []
    for line in text.splitlines():
        if not line.strip():
            found.append("")
        elif "#" in line and "not a comment" not in line:
            found.append(line[line.index("#") :])
    return found


def test_rejecting_a_draft_keeps_every_comment_and_blank_line_around_it_and_of_the_approved_ones():
    reviewed = parse_reviewed(
        _reviewed(
            REALISTIC,
            {
                "DU2-BATTERY-02": "approve",
                "DU2-BATTERY-03": "reject",
                "DU2-BATTERY-04": "approve",
                "OOS-01": "reject",
            },
        ),
        "r.yml",
    )
    result = apply_reviewed(REALISTIC, "q.yml", _drafts(REALISTIC), reviewed)
    assert result.rejected == ("DU2-BATTERY-03", "OOS-01")
    own = {
        "# a rejected draft's own comment",
        "# a comment inside the rejected draft",
        "# status last, with a comment",
    }
    expected = [c for c in _comment_and_blank_lines(REALISTIC) if c not in own]
    assert _comment_and_blank_lines(result.text) == expected
    # each comment still sits where it was: above the question it was written above
    assert "  # about DU2-BATTERY-04: the 2 A charger only\n  - id: DU2-BATTERY-04\n" in result.text
    assert (
        "# after DU2-BATTERY-04, before the out-of-scope block\n\n# the end of the set: add new questions above\n"
        in result.text
    )
    assert "      # not a comment: part of the reference\n" in result.text
    after = parse_question_set(result.text, "q.yml", {"du2", "du3"}, allow_drafts=True).by_id()
    assert sorted(after) == ["DU2-BATTERY-01", "DU2-BATTERY-02", "DU2-BATTERY-04"]
    assert all(
        q.status is None and (q.provenance is None or q.provenance.reviewed_by == "ana")
        for q in after.values()
    )
    assert after["DU2-BATTERY-01"].reference == "6.5 hours.\n# not a comment: part of the reference\n"


def test_approving_without_edits_changes_only_the_status_lines_and_the_reviewer():
    reviewed = parse_reviewed(
        _reviewed(REALISTIC, {"DU2-BATTERY-02": "approve", "DU2-BATTERY-04": "approve"}, reviewer=""), "r.yml"
    )
    result = apply_reviewed(REALISTIC, "q.yml", _drafts(REALISTIC), reviewed)
    kept = REALISTIC.splitlines(keepends=True)
    removed = [i for i, line in enumerate(kept) if line.strip().startswith("status: draft")][:1] + [
        i for i, line in enumerate(kept) if line.strip().startswith("status: draft   #")
    ]
    assert result.text == "".join(line for i, line in enumerate(kept) if i not in removed)


def test_rejecting_every_draft_of_a_file_leaves_the_hand_written_part_as_it_was():
    reviewed = parse_reviewed(
        _reviewed(
            REALISTIC,
            dict.fromkeys(("DU2-BATTERY-02", "DU2-BATTERY-03", "DU2-BATTERY-04", "OOS-01"), "reject"),
        ),
        "r.yml",
    )
    result = apply_reviewed(REALISTIC, "q.yml", _drafts(REALISTIC), reviewed)
    assert result.text.startswith(REALISTIC[: REALISTIC.index("  - id: DU2-BATTERY-02")])
    assert result.text.endswith(
        "# after DU2-BATTERY-04, before the out-of-scope block\n\n# the end of the set: add new questions above\n"
    )
    assert list(parse_question_set(result.text, "q.yml", {"du2"}).by_id()) == ["DU2-BATTERY-01"]


def test_a_draft_id_in_nfd_in_the_set_and_nfc_in_the_review_is_the_same_draft():
    nfd = unicodedata.normalize("NFD", "DU2-CAFÉ-01")
    text = REALISTIC.replace("DU2-BATTERY-03", nfd)
    reviewed = parse_reviewed(
        _reviewed(text, {unicodedata.normalize("NFC", nfd): "reject", "DU2-BATTERY-02": "approve"}), "r.yml"
    )
    result = apply_reviewed(text, "q.yml", _drafts(text), reviewed)
    assert result.rejected == ("DU2-CAFÉ-01",) and nfd not in result.text
    nfd_review = parse_reviewed(
        f'drafts:\n  - {{id: "{unicodedata.normalize("NFD", "OOS-É")}", hash: "h", decision: reject}}\n',
        "r.yml",
    )
    assert nfd_review.decisions[0].id == "OOS-É"  # normalised when read


def test_a_reviewed_entry_without_its_hash_is_refused_so_a_draft_changed_since_the_page_is_never_approved():
    changed = REALISTIC.replace(
        "Which charger fills the PowerPack 400?", "Which charger fills the PowerPack 500?"
    )
    reviewed = parse_reviewed(
        "drafts:\n  - {id: DU2-BATTERY-04, decision: approve}\n  - {id: DU2-BATTERY-02, hash: '', decision: reject}\n",
        "r.yml",
    )
    with pytest.raises(ValidationError) as refused:
        apply_reviewed(changed, "q.yml", _drafts(changed), reviewed, "r.yml")
    assert refused.value.problems == [
        "r.yml:2: DU2-BATTERY-04 has no `hash:` (the draft's content hash when it was reviewed): make a new page with "
        "`rag-ci questions review`, or decide with `rag-ci questions approve/reject/edit`",
        "r.yml:3: DU2-BATTERY-02 has no `hash:` (the draft's content hash when it was reviewed): make a new page with "
        "`rag-ci questions review`, or decide with `rag-ci questions approve/reject/edit`",
    ]


def test_a_reviewer_edits_doc_id_sources_expect_and_tags_and_the_comments_stay():
    drafts = _drafts(REALISTIC)
    reviewed = parse_reviewed(
        f"""\
reviewer: ana
drafts:
  - id: DU2-BATTERY-02
    hash: {drafts["DU2-BATTERY-02"].content_hash}
    decision: approve
    doc_id: [du2, du3]
    sources: [du2/battery.md, du3/battery.md]
    tags: [generated, cross_corpus]
  - id: OOS-01
    hash: {drafts["OOS-01"].content_hash}
    decision: approve
    expect: answer
    doc_id: du3
    sources: [du3/chess.md]
    reference: The e4 opening.
""",
        "r.yml",
    )
    result = apply_reviewed(REALISTIC, "q.yml", drafts, reviewed, corpora={"du2", "du3"})
    assert result.edited == ("DU2-BATTERY-02", "OOS-01")
    assert _comment_and_blank_lines(result.text) == _comment_and_blank_lines(REALISTIC)
    after = parse_question_set(result.text, "q.yml", {"du2", "du3"}, allow_drafts=True).by_id()
    assert after["DU2-BATTERY-02"].doc_id == ("du2", "du3") and after["DU2-BATTERY-02"].sources == (
        "du2/battery.md",
        "du3/battery.md",
    )
    assert (
        after["DU2-BATTERY-02"].tags == ("generated", "cross_corpus")
        and after["DU2-BATTERY-02"].status is None
    )
    oos = after["OOS-01"]
    assert (oos.expect, oos.doc_id, oos.sources, oos.reference) == (
        "answer",
        ("du3",),
        ("du3/chess.md",),
        "The e4 opening.",
    )
    assert oos.provenance.reviewed_by == "ana"
    assert result.text.endswith(
        "    provenance: {writer: fake, date: '2026-05-01', reviewed_by: ana}\n"
        "# the end of the set: add new questions above\n"
    )


def test_an_edited_doc_id_outside_the_routing_table_or_a_malformed_edit_is_refused_with_the_reviewed_files_line():
    drafts = _drafts(REALISTIC)
    reviewed = parse_reviewed(
        f"drafts:\n  - {{id: DU2-BATTERY-02, hash: {drafts['DU2-BATTERY-02'].content_hash}, "
        "decision: approve, doc_id: [du9]}\n",
        "r.yml",
    )
    with pytest.raises(ValidationError) as refused:
        apply_reviewed(REALISTIC, "q.yml", drafts, reviewed, "r.yml", corpora={"du2", "du3"})
    assert refused.value.problems == [
        "r.yml:2: DU2-BATTERY-02: doc_id du9 is not a corpus of the routing table (du2, du3)"
    ]
    with pytest.raises(ValidationError) as bad:
        parse_reviewed(
            "drafts:\n  - {id: A, expect: maybe, sources: x}\n  - {id: B, doc_id: [1], tags: [' ']}\n",
            "r.yml",
        )
    assert bad.value.problems == [
        "r.yml:2: A: sources must be a list of non-empty strings",
        "r.yml:2: A: expect must be answer or refusal, got 'maybe'",
        "r.yml:3: B: tags must be a list of non-empty strings",
        "r.yml:3: B: doc_id must be a corpus name or a list of them",
    ]


def test_a_flow_style_list_and_a_set_of_drafts_only_are_applied_too():
    flow = (
        "version: 1\nquestions: [{id: A, question: q?, tags: [generated], status: draft, expect: refusal}, "
        "{id: B, question: r?, expect: refusal, status: draft}]\n"
    )
    drafts = _drafts(flow)
    reviewed = parse_reviewed(
        f"drafts:\n  - {{id: A, hash: {drafts['A'].content_hash}, decision: approve}}\n"
        f"  - {{id: B, hash: {drafts['B'].content_hash}, decision: reject}}\n",
        "r.yml",
    )
    result = apply_reviewed(flow, "q.yml", drafts, reviewed)
    after = parse_question_set(result.text, "q.yml", {"du2"}).by_id()
    assert list(after) == ["A"] and after["A"].status is None

    only = "version: 1\nquestions:\n  # drafts\n  - id: OOS-01\n    question: Chess?\n    expect: refusal\n    status: draft\n# end\n"
    drafts = _drafts(only)
    reviewed = parse_reviewed(
        f"drafts:\n  - {{id: OOS-01, hash: {drafts['OOS-01'].content_hash}, decision: reject}}\n", "r.yml"
    )
    result = apply_reviewed(only, "q.yml", drafts, reviewed)
    assert result.text == "version: 1\nquestions:\n  # drafts\n# end\n"
    # generate can fill it again
    assert parse_question_set(result.text, "q.yml", {"du2"}, allow_drafts=True).questions == ()


def test_approving_drafts_into_the_set_init_wrote_drops_its_empty_for_now_header():
    from rag_ci.cli.init import EMPTY_SET
    from rag_ci.core.review.draft_review import EMPTY_SET_HEADER

    assert EMPTY_SET_HEADER in EMPTY_SET  # the header the review replaces is the one init writes
    text = EMPTY_SET.replace(
        "questions: []\n",
        "questions:\n  - id: D1\n    question: How long does the charger take?\n"
        "    reference: 6.5 hours.\n    doc_id: du2\n    status: draft\n",
    )
    result = apply_reviewed(
        text, "q.yml", _drafts(text), parse_reviewed(_reviewed(text, {"D1": "approve"}), "r.yml")
    )
    assert "Empty for now" not in result.text  # today: the header still says the set is empty
    assert result.text.startswith(
        "# The question set rag-ci replays on every pull request (docs/questions.md).\n"
        "# `rag-ci questions generate` drafts more questions"
    )
    rejected = apply_reviewed(
        text, "q.yml", _drafts(text), parse_reviewed(_reviewed(text, {"D1": "reject"}), "r.yml")
    )
    assert "Empty for now" in rejected.text  # still empty: still true
