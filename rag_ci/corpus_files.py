"""The corpora's documents on disk: which folder, which files, their text and fingerprints.

A corpus's folder is the sub-folder `corpora_dir` found it in, or the `path:` a
`corpora:` entry gives (relative to rag-ci.yml). Every file under it is a document but
the corpus's config.yml and hidden files; a document that is not UTF-8 text (a PDF, an
image) still has a fingerprint, but no passages to draft from. The pure side of
documents (names, matching, hashes) is rag_ci.core.questionset.documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.questionset.config import CorpusSpec
from rag_ci.core.questionset.documents import Document, DocumentIndex, content_fingerprint
from rag_ci.errors import RagCiError


def corpus_folders(root: Path, corpora: Mapping[str, CorpusSpec]) -> dict[str, Path]:
    """Corpus -> its folder, for the corpora that have one; RagCiError when a folder is missing."""
    folders = {}
    for name, spec in corpora.items():
        if not spec.path:
            continue
        folder = Path(spec.path) if Path(spec.path).is_absolute() else root / spec.path
        if not folder.is_dir():
            raise RagCiError(f"corpus '{name}': its folder {folder} does not exist (`path:` is relative to rag-ci.yml)")
        folders[name] = folder
    return folders


def list_documents(folder: Path) -> list[str]:
    """The documents of a corpus folder, as paths inside it; config.yml and hidden files aside."""
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*")
        if p.is_file() and p.name != "config.yml"
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


@dataclass(frozen=True)
class CorpusFiles:
    index: DocumentIndex
    texts: dict[tuple[str, str], str]  # (corpus, path) -> text, for the documents that are text

    def paths(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for document in self.index.documents:
            out.setdefault(document.corpus, []).append(document.path)
        return out


def _text(data: bytes) -> str | None:
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_corpora(folders: Mapping[str, Path], *, content: bool = True) -> CorpusFiles:
    """Every document of these folders, fingerprinted, and the text of those that are text;
    with `content=False` only their names (nothing is read; fingerprints are empty)."""
    documents, texts = [], {}
    for corpus, folder in sorted(folders.items()):
        for path in list_documents(folder):
            if not content:
                documents.append(Document(corpus, path, ""))
                continue
            try:
                data = (folder / path).read_bytes()
            except OSError as exc:
                raise RagCiError(f"cannot read document {folder / path}: {exc}") from None
            documents.append(Document(corpus, path, content_fingerprint(data)))
            text = _text(data)
            if text is not None:
                texts[(corpus, path)] = text
    return CorpusFiles(DocumentIndex(documents), texts)
