"""How a question's sources name the corpora's documents: coverage, fingerprints, stale citations, draft names."""

import pytest
from click.testing import CliRunner

from builders import write
from rag_ci.cli import cli
from rag_ci.core.questionset.coverage import coverage
from rag_ci.core.questionset.documents import (
    CitationStyle,
    Document,
    DocumentIndex,
    ambiguous_file_names,
    citation_style,
    cites,
    missing_citations,
    without_extension,
)
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.core.scoring import retrieval_metrics as rm


def _set(*sources_per_question):
    items = "".join(
        f"  - {{id: Q{i}, question: q{i}, doc_id: news-even, sources: {list(s)}}}\n"
        for i, s in enumerate(sources_per_question)
    )
    return parse_question_set("version: 1\nquestions:\n" + items, "q.yml", {"news-even"})


def test_coverage_counts_a_document_cited_without_its_extension():
    # A set citing `news-even/q0-pos0` reported every `news-even/q0-pos0.txt` as uncited.
    questions = _set(["news-even/q0-pos0"], ["news-even/q1-pos0#2"])
    report = coverage(questions, ["news-even"], {"news-even": ["q0-pos0.txt", "q1-pos0.txt", "q2-pos0.txt"]})
    assert report.uncited_documents == ("news-even/q2-pos0.txt",)


def test_a_source_names_a_document_by_path_or_file_name_with_or_without_extension_and_locator():
    for source in (
        "du2/docs/battery.md",
        "du2/battery.md",
        "du2/battery",
        "du2/docs/battery#3",
        "du2/battery.md:12",
    ):
        assert cites(source, "du2", "docs/battery.md"), source
    for source in ("du3/battery.md", "du2/battery.mdx", "du2/docs", "du2/batt"):
        assert not cites(source, "du2", "docs/battery.md"), source
    assert without_extension("a/b.c/d.txt") == "a/b.c/d" and without_extension("a/.env") == "a/.env"


@pytest.mark.parametrize(
    "context, expected, matches",
    [
        ("news-even/q0-pos0", "news-even/q0-pos0.txt", True),  # the RAG drops the extension
        ("news-even/q0-pos0#3", "news-even/q0-pos0.txt", True),
        ("news-even/q0-pos0.txt#3", "news-even/q0-pos0", True),  # the set drops it
        ("a/x.mdx", "a/x.md", False),  # two extensions are two documents
        ("a/x", "a/x.md.bak", False),
        ("a/x.md.bak", "a/x.md", False),
        ("a/xy", "a/x.md", False),
    ],
)
def test_retrieval_source_matching_tolerates_a_dropped_file_extension(context, expected, matches):
    assert rm.source_matches(context, expected) is matches


def test_hit_at_k_finds_documents_the_rag_reports_without_extension():
    rel = rm.relevance(
        [rm.Context(text="t", doc_id="n", source="news-even/q0-pos0#1")], ["news-even/q0-pos0.txt"]
    )
    assert rm.hit_at_k(rel, 5) == 1.0


def test_fingerprints_follow_each_cited_document_and_say_when_it_is_gone():
    index = DocumentIndex(
        [
            Document("du2", "docs/battery.md", "f1"),
            Document("du2", "docs/overview.md", "f2"),
            Document("du3", "a/x.md", "f3"),
            Document("du3", "b/x.md", "f4"),
        ]
    )
    found = index.fingerprints(["du2/battery.md#1", "du2/gone.md", "du3/x.md", "elsewhere/doc.md"])
    assert found["du2/battery.md#1"] == "f1" and found["du2/gone.md"] is None
    assert found["du3/x.md"] not in (None, "f3", "f4")  # a shared file name: both documents' contents
    assert "elsewhere/doc.md" not in found  # a corpus without a known folder: nothing to say
    changed = DocumentIndex(
        [Document("du2", "docs/battery.md", "f9"), Document("du2", "docs/overview.md", "f2")]
    )
    assert changed.corpus_fingerprints()["du2"] != index.corpus_fingerprints()["du2"]
    assert missing_citations([("Q1", ["du2/battery.md", "du2/gone.md", "x/y.md"])], index) == [
        ("Q1", "du2/gone.md")
    ]


def test_drafts_cite_documents_the_way_the_set_already_does():
    paths = ["docs/battery.md", "docs/overview.md"]
    assert citation_style("du2", paths, ["du2/battery.md", "du2/overview.md#2"]) == CitationStyle(
        by_file_name=True
    )
    assert citation_style("du2", paths, []) == CitationStyle()  # the full path in the corpus folder
    bare = citation_style("du2", paths, ["du2/docs/battery", "du2/docs/overview.md", "du2/docs/overview"])
    assert bare.name("du2", "docs/battery.md") == "du2/docs/battery"
    named = CitationStyle(by_file_name=True)
    assert named.name("du3", "a/x.md", ambiguous_file_names(["a/x.md", "b/x.md"])) == "du3/a/x.md"


def test_validate_coverage_lists_the_documents_of_a_corpus_declared_with_a_path(tmp_path, monkeypatch):
    # Before: only corpora_dir corpora had their uncited documents listed; a `path:` is
    # relative to rag-ci.yml, wherever validate runs from.
    project = tmp_path / "project"
    write(project / "manuals" / "a.md", "# A\n")
    write(project / "manuals" / "sub" / "b.txt", "B\n")
    write(
        project / "rag-ci.yml",
        """
        corpora:
          man: {description: manuals, path: manuals}
        target: {kind: command, command: ["true"]}
    """,
    )
    write(
        project / "questions.yml",
        """
        version: 1
        questions:
          - {id: Q1, question: q, doc_id: man, sources: [man/a.md], tags: [x, x2]}
          - {id: Q2, question: q, doc_id: man, sources: [man/old.md]}
    """,
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "--config", str(project / "rag-ci.yml"), "--coverage"])
    assert result.exit_code == 0, result.output
    assert "documents no question cites in `sources` (1 of 2):\n  man/sub/b.txt" in result.output
    assert "warning: Q2 cites man/old.md, which no document of corpus 'man' matches" in result.output
