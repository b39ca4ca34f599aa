"""The corpora's documents as the question set cites them (docs/questions.md).

A question's `sources` name a document as `corpus/path-inside-the-corpus-folder` or
`corpus/file-name`, with an optional `#chunk` or `:line` suffix, and with or without the
file's extension: a RAG that reports `news-even/q0-pos0` cites `news-even/q0-pos0.txt`.
One matching rule serves coverage (`validate --coverage`), the documents' fingerprints in
results.json ("questions follow their documents"), the check for questions citing a
document that no longer exists, and the name a generated draft cites its document by.

Pure: documents (names and content hashes) in, matches and names out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_ci.core.base.hashing import stable_hash

_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_LINE_SUFFIX = re.compile(r":\d+(-\d+)?$")


@dataclass(frozen=True)
class Document:
    """One file of a corpus folder."""

    corpus: str
    path: str  # inside the corpus folder, with `/`
    fingerprint: str  # content hash (`content_fingerprint`)

    @property
    def name(self) -> str:
        return f"{self.corpus}/{self.path}"


def content_fingerprint(data: bytes) -> str:
    """A document's identity: a short sha256 of its bytes."""
    return hashlib.sha256(data).hexdigest()[:16]


def without_extension(name: str) -> str:
    """`news-even/q0-pos0.txt` -> `news-even/q0-pos0` (only the last path part's extension)."""
    head, _, last = name.rpartition("/")
    stem = _EXTENSION.sub("", last) if not last.startswith(".") else last
    return f"{head}/{stem}" if head else stem


def document_part(source: str) -> str:
    """A source without its chunk (`#3`) or line (`:12`) locator."""
    return _LINE_SUFFIX.sub("", source.split("#", 1)[0])


def names_of(corpus: str, path: str) -> set[str]:
    """Every name a source may cite the document `corpus/path` by."""
    full, short = f"{corpus}/{path}", f"{corpus}/{path.rsplit('/', 1)[-1]}"
    return {full, short, without_extension(full), without_extension(short)}


def cites(source: str, corpus: str, path: str) -> bool:
    """Does `source` (one entry of a question's `sources`) name the document `corpus/path`?"""
    names = names_of(corpus, path)
    return source.split("#", 1)[0] in names or document_part(source) in names


class DocumentIndex:
    """The documents of the corpora whose folders are known, looked up by any name they are cited by."""

    def __init__(self, documents: Iterable[Document]):
        self.documents = tuple(sorted(documents, key=lambda d: (d.corpus, d.path)))
        self.corpora = frozenset(d.corpus for d in self.documents)
        self._by_name: dict[str, list[Document]] = {}
        for document in self.documents:
            for name in names_of(document.corpus, document.path):
                self._by_name.setdefault(name, []).append(document)

    def cited(self, source: str) -> list[Document]:
        """The documents `source` names (several when a file name is shared by sub-folders)."""
        found = self._by_name.get(source.split("#", 1)[0]) or self._by_name.get(document_part(source)) or []
        if not found:  # a folder: `du2/docs` names every document under it
            prefix = document_part(source).rstrip("/") + "/"
            found = [d for d in self.documents if d.name.startswith(prefix)]
        return found

    def knows_corpus_of(self, source: str) -> bool:
        """Whether the source's corpus (its first path part) has a known folder to check it against."""
        return source.split("/", 1)[0] in self.corpora

    def fingerprints(self, sources: Iterable[str]) -> dict[str, str | None]:
        """Source -> the content fingerprint of the document(s) it names, None when it names
        none; sources of corpora without a known folder are left out (nothing to say)."""
        out: dict[str, str | None] = {}
        for source in sources:
            if not self.knows_corpus_of(source):
                continue
            found = self.cited(source)
            if not found:
                out[source] = None
            elif len(found) == 1:
                out[source] = found[0].fingerprint
            else:
                out[source] = stable_hash(sorted(d.fingerprint for d in found))
        return out

    def corpus_fingerprints(self) -> dict[str, str]:
        """Corpus -> one hash of its documents' names and contents (the history records it)."""
        by_corpus: dict[str, list[tuple[str, str]]] = {}
        for document in self.documents:
            by_corpus.setdefault(document.corpus, []).append((document.path, document.fingerprint))
        return {corpus: stable_hash(files) for corpus, files in sorted(by_corpus.items())}


def missing_citations(
    questions: Iterable[tuple[str, Sequence[str]]], index: DocumentIndex
) -> list[tuple[str, str]]:
    """(question id, source) for every source that names no document of its (known) corpus:
    the document was removed or renamed, and the question may be stale."""
    return [
        (qid, source)
        for qid, sources in questions
        for source in sources
        if index.knows_corpus_of(source) and not index.cited(source)
    ]


@dataclass(frozen=True)
class CitationStyle:
    """How the question set names a corpus's documents, so drafts cite them the same way."""

    by_file_name: bool = False  # `du2/battery.md` rather than `du2/docs/battery.md`
    with_extension: bool = True

    def name(self, corpus: str, path: str, ambiguous_names: frozenset[str] = frozenset()) -> str:
        short = path.rsplit("/", 1)[-1]
        name = (
            f"{corpus}/{short}" if self.by_file_name and short not in ambiguous_names else f"{corpus}/{path}"
        )
        return name if self.with_extension else without_extension(name)


def citation_style(corpus: str, paths: Sequence[str], sources: Iterable[str]) -> CitationStyle:
    """The style most of the set's citations of this corpus use; the full path in the corpus
    folder, with its extension, when none cites it yet."""
    by_name = by_path = bare = with_ext = 0
    for source in sources:
        cited = document_part(source)
        for path in paths:
            full, short = f"{corpus}/{path}", f"{corpus}/{path.rsplit('/', 1)[-1]}"
            if cited == full:
                by_path, with_ext = by_path + 1, with_ext + 1
            elif cited == without_extension(full):
                by_path, bare = by_path + 1, bare + 1
            elif cited == short:
                by_name, with_ext = by_name + 1, with_ext + 1
            elif cited == without_extension(short):
                by_name, bare = by_name + 1, bare + 1
            else:
                continue
            break
    return CitationStyle(by_file_name=by_name > by_path, with_extension=with_ext >= bare)


def ambiguous_file_names(paths: Iterable[str]) -> frozenset[str]:
    """File names used by more than one document of a corpus: those are cited by their full path."""
    seen: dict[str, int] = {}
    for path in paths:
        short = path.rsplit("/", 1)[-1]
        seen[short] = seen.get(short, 0) + 1
    return frozenset(name for name, n in seen.items() if n > 1)
