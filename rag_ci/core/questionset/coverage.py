"""`rag-ci validate --coverage`: what the question set does not test.

Corpora no question routes to, documents (of a corpus whose folder is known: `corpora_dir`
or a corpus's `path:`) no question cites in its `sources` (rag_ci.core.questionset.documents
says how a source names a document), and tags with fewer than N questions. Each new corpus
should come with its questions; a corpus or document without any is a blind spot of the gate.

Pure: the question set and the documents' names in, a report out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rag_ci.core.questionset.documents import document_part, names_of
from rag_ci.core.questionset.questions import QuestionSet


@dataclass(frozen=True)
class Coverage:
    uncited_corpora: tuple[str, ...]
    uncited_documents: tuple[str, ...]  # corpus/path
    thin_tags: tuple[tuple[str, int], ...]  # (tag, questions) below the minimum
    min_per_tag: int
    documents: int

    @property
    def complete(self) -> bool:
        return not (self.uncited_corpora or self.uncited_documents or self.thin_tags)


def coverage(
    questions: QuestionSet,
    corpora: Iterable[str],
    documents: Mapping[str, Iterable[str]],
    min_per_tag: int = 3,
) -> Coverage:
    """`documents`: corpus -> paths of its documents inside the corpus folder."""
    cited_corpora = {c for q in questions.questions for c in q.doc_id}
    # The names the sources cite (rag_ci.core.questionset.documents.cites, as one set lookup).
    cited = {
        name
        for q in questions.questions
        for s in q.sources
        for name in (s.split("#", 1)[0], document_part(s))
    }
    uncited_docs = sorted(
        f"{corpus}/{path}"
        for corpus, paths in documents.items()
        for path in paths
        if not names_of(corpus, path) & cited
    )
    tags = Counter(t for q in questions.questions for t in q.tags)
    return Coverage(
        uncited_corpora=tuple(sorted(c for c in corpora if c not in cited_corpora)),
        uncited_documents=tuple(uncited_docs),
        thin_tags=tuple(sorted((t, n) for t, n in tags.items() if n < min_per_tag)),
        min_per_tag=min_per_tag,
        documents=sum(len(list(p)) for p in documents.values()),
    )


def render_coverage(report: Coverage) -> str:
    lines = []
    lines.append(f"corpora no question routes to: {', '.join(report.uncited_corpora) or 'none'}")
    if report.documents:
        lines.append(
            f"documents no question cites in `sources` ({len(report.uncited_documents)} of {report.documents}):"
        )
        lines += [f"  {d}" for d in report.uncited_documents]
    lines.append(
        f"tags with fewer than {report.min_per_tag} questions: "
        + (", ".join(f"{t} ({n})" for t, n in report.thin_tags) or "none")
    )
    return "\n".join(lines)
