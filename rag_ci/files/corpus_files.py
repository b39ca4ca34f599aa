"""The corpora's documents on disk: which folder, which files, their text and fingerprints.

A corpus's folder is the sub-folder `corpora_dir` found it in, or the `path:` a
`corpora:` entry gives (relative to rag-ci.yml). Every file under it is a document but
the corpus's config.yml and hidden files; a document that is not UTF-8 text (a PDF, an
image) still has a fingerprint, but no passages to draft from. The pure side of
documents (names, matching, hashes) is rag_ci.core.questionset.documents.

Nothing outside a corpus's folder is ever read (issue 34): a link (to a file or a folder)
that leads outside it is skipped and counted, never followed, so a contributed
`notes.md -> ~/.aws/credentials` cannot reach the writer's prompts or questions.yml.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.config import CorpusSpec
from rag_ci.core.questionset.documents import Document, DocumentIndex, content_fingerprint
from rag_ci.errors import RagCiError
from rag_ci.files.project import leaves, repository_root


def corpus_folders(root: Path, corpora: Mapping[str, CorpusSpec]) -> dict[str, Path]:
    """Corpus -> its folder, for the corpora that have one; RagCiError when a folder is
    missing or lies outside the repository (rag_ci.files.project refuses such a `path:` first)."""
    repository = repository_root(root)
    folders = {}
    for name, spec in corpora.items():
        if not spec.path:
            continue
        folder = Path(spec.path) if Path(spec.path).is_absolute() else root / spec.path
        if leaves(folder, repository):
            raise RagCiError(f"corpus '{name}': its folder {folder} is outside the repository ({repository})")
        if not folder.is_dir():
            raise RagCiError(
                f"corpus '{name}': its folder {folder} does not exist (`path:` is relative to rag-ci.yml)"
            )
        folders[name] = folder
    return folders


def documents_in(folder: Path) -> tuple[list[str], int]:
    """The documents of a corpus folder, as paths inside it (config.yml and hidden files
    aside), and how many links leading outside the folder were not followed. A link to a
    folder inside the corpus is not followed either: its files are listed where they are."""
    found, links_outside = [], 0
    for top, dirs, files in os.walk(folder):
        here = Path(top)
        for name in list(dirs):
            if (here / name).is_symlink():
                dirs.remove(name)
                links_outside += leaves(here / name, folder)
        for name in files:
            path = here / name
            if path.is_symlink() and leaves(path, folder):
                links_outside += 1
                continue
            relative = path.relative_to(folder)
            if (
                path.is_file()
                and name != "config.yml"
                and not any(part.startswith(".") for part in relative.parts)
            ):
                found.append(relative.as_posix())
    return sorted(found), links_outside


def links_outside_note(count: int) -> str | None:
    """The warning line for links leading outside a corpus, None when there were none."""
    if not count:
        return None
    return f"warning: {count} link{'s' if count != 1 else ''} outside the corpus not followed (docs/questions.md)"


@dataclass(frozen=True)
class CorpusFiles:
    index: DocumentIndex
    texts: dict[tuple[str, str], str]  # (corpus, path) -> text, for the documents that are text
    links_outside: int = 0  # links leading outside a corpus folder, not followed

    def paths(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for document in self.index.documents:
            out.setdefault(document.corpus, []).append(document.path)
        return out


_BINARY = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def _text(data: bytes) -> str | None:
    """The document's text: UTF-8, UTF-16 with its byte-order mark, or else Latin-1 when
    the bytes hold no control characters (a PDF, an image, an archive does)."""
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None if _BINARY.search(data[:8192]) else data.decode("latin-1")


def read_corpora(folders: Mapping[str, Path], *, content: bool = True) -> CorpusFiles:
    """Every document of these folders, fingerprinted, and the text of those that are text;
    with `content=False` only their names (nothing is read; fingerprints are empty)."""
    documents, texts, links_outside = [], {}, 0
    for corpus, folder in sorted(folders.items()):
        paths, outside = documents_in(folder)
        links_outside += outside
        for path in paths:
            if not content:
                documents.append(Document(corpus, path, ""))
                continue
            if leaves(folder / path, folder):  # replaced by a link since it was listed
                links_outside += 1
                continue
            try:
                data = (folder / path).read_bytes()
            except OSError as exc:
                raise RagCiError(f"cannot read document {folder / path}: {exc}") from None
            documents.append(Document(corpus, path, content_fingerprint(data)))
            text = _text(data)
            if text is not None:
                texts[(corpus, path)] = text
    return CorpusFiles(DocumentIndex(documents), texts, links_outside)
