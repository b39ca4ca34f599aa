"""Reviewing drafts without a browser: `questions approve/reject/edit` and `questions review --cli`
write the same decisions the page exports, through the same checks."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.review.draft_review import parse_reviewed

CONFIG = """\
questions: questions.yml
corpora:
  du2: {description: DU-2 manual, path: docs/du2}
  du3: {description: DU-3 manual, path: docs/du3}
target: {kind: command, command: ["python", "rag.py"]}
metrics: {hit_at_k: {k: 5}}
"""
QUESTIONS = """\
version: 1
questions:
  - id: DU2-BATTERY-01   # hand-written
    question: How long does the charger take?
    reference: 6.5 hours.
    doc_id: du2
    sources: [du2/battery.md]

  # drafts below
  - id: DU2-BATTERY-02
    question: How long does the standard charger take?
    reference: The standard 2 A charger fills an empty PowerPack 400 in 6.5 hours.
    doc_id: du2
    sources: [du2/battery.md]
    keywords: [2 A, 6.5 hours]
    tags: [generated]
    status: draft
    provenance: {writer: fake, date: '2026-05-01'}
  # a comment about DU2-BATTERY-03
  - id: DU2-BATTERY-03
    question: how long does charrging take ??
    reference: About 6.5 hours with the 2 A charger.
    doc_id: du2
    sources: [du2/battery.md]
    tags: [generated, adversarial, misspelt]
    status: draft
    provenance: {writer: fake, date: '2026-05-01'}
  - id: OOS-01
    question: Which chess opening suits a beginner?
    tags: [generated, adversarial, out_of_scope]
    expect: refusal
    status: draft
    provenance: {writer: fake, date: '2026-05-01'}
"""


def _project(tmp_path: Path) -> Path:
    for corpus, text in (
        ("du2", "# Battery\n\nThe standard 2 A charger fills it in 6.5 hours.\n"),
        ("du3", "# Battery\n\nThe 4 A fast charger reaches 80 percent in 2.5 hours.\n"),
    ):
        (tmp_path / "docs" / corpus).mkdir(parents=True)
        (tmp_path / "docs" / corpus / "battery.md").write_text(text)
    (tmp_path / "questions.yml").write_text(QUESTIONS)
    (tmp_path / "rag.py").write_text("print('{}')\n")  # the target's program: validate checks it is there
    config = tmp_path / "rag-ci.yml"
    config.write_text(CONFIG)
    return config


def _set(tmp_path: Path):
    return parse_question_set(
        (tmp_path / "questions.yml").read_text(), "q", {"du2", "du3"}, allow_drafts=True
    ).by_id()


def _invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_approve_and_reject_verbs_decide_drafts_in_place_keeping_the_files_comments(tmp_path):
    config = _project(tmp_path)
    done = _invoke("questions", "approve", "DU2-BATTERY-02", "--reviewer", "ana", "--config", str(config))
    assert done.exit_code == 0, done.output
    assert "1 approved (0 edited), 0 rejected, 2 still drafts" in done.output
    gone = _invoke("questions", "reject", "DU2-BATTERY-03", "OOS-01", "--config", str(config))
    assert gone.exit_code == 0 and "0 approved (0 edited), 2 rejected, 0 still drafts" in gone.output
    after = _set(tmp_path)
    assert list(after) == ["DU2-BATTERY-01", "DU2-BATTERY-02"]
    assert after["DU2-BATTERY-02"].status is None and after["DU2-BATTERY-02"].provenance.reviewed_by == "ana"
    text = (tmp_path / "questions.yml").read_text()
    assert (
        "# hand-written" in text and "# drafts below" in text and "# a comment about DU2-BATTERY-03" in text
    )
    assert _invoke("validate", "--config", str(config)).exit_code == 0  # no draft left: a gated set


def test_edit_changes_sources_and_doc_id_keeps_the_draft_until_approved_and_refuses_an_unknown_corpus(
    tmp_path,
):
    config = _project(tmp_path)
    edited = _invoke(
        "questions",
        "edit",
        "DU2-BATTERY-03",
        "--doc-id",
        "du3",
        "--sources",
        "du3/battery.md",
        "--reference",
        "80 percent in 2.5 hours with the 4 A fast charger.",
        "--config",
        str(config),
    )
    assert edited.exit_code == 0, edited.output
    assert "0 approved (1 edited), 0 rejected, 3 still drafts" in edited.output
    draft = _set(tmp_path)["DU2-BATTERY-03"]
    assert (draft.doc_id, draft.sources, draft.status) == (("du3",), ("du3/battery.md",), "draft")
    assert draft.reference == "80 percent in 2.5 hours with the 4 A fast charger."

    both = _invoke(
        "questions",
        "edit",
        "DU2-BATTERY-03",
        "--doc-id",
        "du2",
        "--doc-id",
        "du3",
        "--sources",
        "du2/battery.md",
        "--sources",
        "du3/battery.md",
        "--tags",
        "cross_corpus",
        "--approve",
        "--config",
        str(config),
    )
    assert both.exit_code == 0 and "1 approved (1 edited)" in both.output
    approved = _set(tmp_path)["DU2-BATTERY-03"]
    assert (
        approved.doc_id == ("du2", "du3") and approved.tags == ("cross_corpus",) and approved.status is None
    )

    before = (tmp_path / "questions.yml").read_text()
    wrong = _invoke("questions", "edit", "OOS-01", "--doc-id", "du9", "--config", str(config))
    assert (
        wrong.exit_code == 2 and "doc_id du9 is not a corpus of the routing table (du2, du3)" in wrong.output
    )
    unknown = _invoke("questions", "approve", "NOPE", "--config", str(config))
    assert unknown.exit_code == 2 and "not a draft of" in unknown.output and "NOPE" in unknown.output
    nothing = _invoke("questions", "edit", "OOS-01", "--config", str(config))
    assert nothing.exit_code == 2 and "nothing to change" in nothing.output
    assert (tmp_path / "questions.yml").read_text() == before


def test_review_in_the_terminal_asks_about_each_draft_saves_reviewed_yml_and_applies_it(tmp_path):
    config = _project(tmp_path)
    answers = (
        "\n".join(
            [
                "ana",  # your name
                "e",  # DU2-BATTERY-02: edit, then approve
                "",  # question: kept
                "",  # expect: kept (answer)
                "du2; du3",  # doc_id
                "du2/battery.md; du3/battery.md",  # sources
                "",  # reference: kept
                "",  # keywords: kept
                "",  # tags: kept
                "r",  # DU2-BATTERY-03: reject
                "a",  # OOS-01: approve
            ]
        )
        + "\n"
    )
    done = _invoke(
        "questions",
        "review",
        "--cli",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "review"),
        input=answers,
    )
    assert done.exit_code == 0, done.output
    assert (
        "[1/3] DU2-BATTERY-02 · du2 · generated" in done.output
        and "  sources:   du2/battery.md" in done.output
    )
    assert "2 approved (1 edited), 1 rejected, 0 still drafts" in done.output
    saved = parse_reviewed((tmp_path / "review" / "reviewed.yml").read_text(), "reviewed.yml")
    assert saved.reviewer == "ana" and [(d.id, d.decision) for d in saved.decisions] == [
        ("DU2-BATTERY-02", "approve"),
        ("DU2-BATTERY-03", "reject"),
        ("OOS-01", "approve"),
    ]
    assert saved.decisions[0].edits == {
        "doc_id": ("du2", "du3"),
        "sources": ("du2/battery.md", "du3/battery.md"),
    }
    after = _set(tmp_path)
    assert (
        after["DU2-BATTERY-02"].doc_id == ("du2", "du3")
        and after["DU2-BATTERY-02"].provenance.reviewed_by == "ana"
    )
    assert "DU2-BATTERY-03" not in after and after["OOS-01"].status is None


def test_quitting_the_terminal_review_at_once_changes_nothing(tmp_path):
    config = _project(tmp_path)
    done = _invoke(
        "questions",
        "review",
        "--cli",
        "--reviewer",
        "ana",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "r"),
        input="q\n",
    )
    assert done.exit_code == 0 and "nothing decided" in done.output
    assert (tmp_path / "questions.yml").read_text() == QUESTIONS and not (tmp_path / "r").exists()


def test_the_terminal_review_asks_again_for_an_unknown_corpus_and_prints_draft_text_through_the_log_boundary(
    tmp_path,
):
    config = _project(tmp_path)
    (tmp_path / "questions.yml").write_text(
        QUESTIONS.replace(
            "question: How long does the standard charger take?", 'question: "How long?\\n::add-mask::leak"'
        )
    )
    answers = (
        "\n".join(
            [
                "e",
                "",
                "",
                "du9",
                "",
                "",
                "",
                "",  # an unknown corpus: asked again
                "",
                "",
                "du3",
                "du3/battery.md",
                "",
                "",
                "",
                "q",
            ]
        )
        + "\n"
    )
    done = _invoke(
        "questions",
        "review",
        "--cli",
        "--reviewer",
        "ana",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "r"),
        input=answers,
    )
    assert done.exit_code == 0, done.output
    assert "doc_id du9 is not a corpus of the routing table: again" in done.output
    # no workflow command
    assert not [line for line in done.output.splitlines() if line.lstrip().startswith("::")]
    assert "1 approved (1 edited)" in done.output
    draft = _set(tmp_path)["DU2-BATTERY-02"]
    assert (draft.doc_id, draft.sources, draft.status) == (("du3",), ("du3/battery.md",), None)


def test_the_terminal_review_shows_a_long_passage_whole_not_cut(tmp_path):
    config = _project(tmp_path)
    sentences = [f"Charging step {n} takes {n * 3} minutes with the 2 A charger." for n in range(1, 60)]
    (tmp_path / "docs" / "du2" / "battery.md").write_text(
        "# Battery\n\nThe standard 2 A charger fills an empty PowerPack 400 in 6.5 hours. "
        + " ".join(sentences)
        + "\n"
    )
    (tmp_path / "questions.yml").write_text(
        QUESTIONS.replace(  # its passage changed: the whole document is shown
            "provenance: {writer: fake, date: '2026-05-01'}\n  # a comment",
            "provenance: {writer: fake, date: '2026-05-01', passage_hash: 0a1b2c3d4e5f6a7b}\n  # a comment",
            1,
        )
    )
    done = _invoke(
        "questions",
        "review",
        "--cli",
        "--reviewer",
        "ana",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "r"),
        input="q\n",
    )
    assert done.exit_code == 0, done.output
    shown = done.output.split("--- passage", 1)[1]
    # the end, not cut
    assert len(shown) > 2000 and "Charging step 59 takes 177 minutes with the 2 A charger." in shown
    assert " …" not in shown


def test_the_terminal_review_never_prints_a_live_escape_sequence_of_a_draft_or_a_document(tmp_path):
    config = _project(tmp_path)
    (tmp_path / "docs" / "du2" / "battery.md").write_text(
        "# Battery\n\nThe standard 2 A charger \x1b]0;pwned\x07fills it in 6.5 hours.\x1b[8m hidden\n"
    )
    (tmp_path / "questions.yml").write_text(
        QUESTIONS.replace(
            "question: How long does the standard charger take?",
            'question: "How long\\e[2J\\u009b1A\\u202e?"',
        )
    )

    done = _invoke(
        "questions",
        "review",
        "--cli",
        "--reviewer",
        "ana",
        "--config",
        str(config),
        "--out",
        str(tmp_path / "r"),
        input="q\n",
    )

    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "\x9b" not in done.output and "\u202e" not in done.output
    assert "How long\\x1b[2J\\x9b1A\\u202e?" in done.output  # shown, as text


def test_validate_never_prints_a_live_escape_sequence_of_the_question_set(tmp_path):
    config = _project(tmp_path)
    (tmp_path / "questions.yml").write_text(
        QUESTIONS.split("\n  # drafts below")[0].replace(
            "sources: [du2/battery.md]", 'sources: ["du2/gone\\e]0;pwned\\a.md"]'
        )
    )

    done = _invoke("validate", "--config", str(config))

    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "\x07" not in done.output
    assert "du2/gone\\x1b]0;pwned\\x07.md" in done.output


def test_edit_refuses_sources_outside_the_corpora_and_documents_that_are_not_there(tmp_path):
    config = _project(tmp_path)
    before = (tmp_path / "questions.yml").read_text()

    for source, said in [
        ("../../etc/passwd", "is no document of a corpus"),
        ("/etc/passwd", "is no document of a corpus"),
        ("du2/../../secret.md", "is no document of a corpus"),
        ("du9/battery.md", "is no document of a corpus"),
        ("du2/gone.md", "no document of corpus 'du2' matches it"),
    ]:
        done = _invoke("questions", "edit", "DU2-BATTERY-03", "--sources", source, "--config", str(config))
        assert done.exit_code == 2, (source, done.output)
        assert said in done.output and "Traceback" not in done.output, (source, done.output)

    assert (tmp_path / "questions.yml").read_text() == before
