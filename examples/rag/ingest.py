"""Build step: read corpora/*/docs/*.md, cut them into chunks, write .index/index.json.

    python rag/ingest.py [--chunk-words 120]        (run from examples/)

A chunk is one heading section of a document. A section longer than
--chunk-words is split between paragraphs, never inside one: a fact and its
number stay together. The corpus folder name is the corpus id (the doc_id).

EXAMPLE_RAG_REGRESSION=chunking replaces this with fixed 25-word windows that
ignore sentences and headings: the kind of "simpler, faster chunker" change that
looks harmless in review, yet cuts "a bit rate of 500" from "kbit/s" and
"fills an empty PowerPack 400 in 6.5" from "hours". rag-ci should catch it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent
CORPORA_DIR = EXAMPLES / "corpora"
INDEX_FILE = EXAMPLES / ".index" / "index.json"
REGRESSIONS = ("chunking", "routing", "history")
WINDOW_WORDS = 25  # chunk size of the `chunking` regression


class IngestError(Exception):
    pass


def regression_switch() -> str:
    """The deliberate-regression switch shared with server.py; "" means the good RAG."""
    value = os.environ.get("EXAMPLE_RAG_REGRESSION", "").strip().lower()
    if value and value not in REGRESSIONS:
        raise IngestError(
            f"EXAMPLE_RAG_REGRESSION={value!r} is not one of: {', '.join(REGRESSIONS)} (or unset)"
        )
    return value


def read_description(config_file: Path) -> str:
    """config.yml needs one line `description: "..."`; a regex keeps this stdlib-only."""
    match = re.search(r"^description:\s*(.+?)\s*$", config_file.read_text(encoding="utf-8"), re.MULTILINE)
    if not match or not match.group(1).strip("\"' "):
        raise IngestError(f'{config_file}: no `description: "..."` line')
    return match.group(1).strip("\"'")


def split_sections(markdown: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """-> (document title, [(section heading, [paragraphs])]). A list item ("- ...") is its own paragraph."""
    title, sections = "", [("", [])]
    paragraph: list[str] = []

    def close_paragraph() -> None:
        if paragraph:
            sections[-1][1].append(" ".join(paragraph))
            paragraph.clear()

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            close_paragraph()
            heading = stripped.lstrip("#").strip()
            if stripped.startswith("# ") and not title:
                title = heading
            else:
                sections.append((heading, []))
        elif not stripped:
            close_paragraph()
        elif stripped.startswith(("- ", "* ")):
            close_paragraph()
            paragraph.append("- " + stripped[2:])
        else:
            paragraph.append(stripped)
    close_paragraph()
    return title, [(heading, paras) for heading, paras in sections if paras]


def section_chunks(markdown: str, chunk_words: int) -> list[dict]:
    """The good chunker: one chunk per section, split between paragraphs when too long."""
    title, sections = split_sections(markdown)
    chunks = []
    for heading, paragraphs in sections:
        label = f"{title} - {heading}" if heading else title
        current: list[str] = []
        for paragraph in paragraphs:
            words_so_far = sum(len(p.split()) for p in current)
            if current and words_so_far + len(paragraph.split()) > chunk_words:
                chunks.append({"heading": label, "text": "\n".join(current)})
                current = []
            current.append(paragraph)
        if current:
            chunks.append({"heading": label, "text": "\n".join(current)})
    return chunks


def window_chunks(markdown: str, window: int = WINDOW_WORDS) -> list[dict]:
    """The regression: fixed word windows across sentence and section boundaries."""
    words = re.sub(r"^#+\s*|^[-*]\s+", "", markdown, flags=re.MULTILINE).split()
    return [{"heading": "", "text": " ".join(words[i : i + window])} for i in range(0, len(words), window)]


def build_index(chunk_words: int, regression: str) -> dict:
    # Same rule as rag-ci's `corpora_dir`: a sub-folder holding a config.yml is a corpus.
    folders = sorted(p for p in CORPORA_DIR.glob("*") if p.is_dir()) if CORPORA_DIR.is_dir() else []
    for folder in folders:
        if not (folder / "config.yml").is_file():
            print(f"ingest: skipping {folder.name}/: no config.yml, so not a corpus", file=sys.stderr)
    corpus_dirs = [p for p in folders if (p / "config.yml").is_file()]
    if not corpus_dirs:
        raise IngestError(f"{CORPORA_DIR}: no corpus folders (sub-folders with a config.yml) found")
    corpora, chunks = {}, []
    for corpus_dir in corpus_dirs:
        corpus = corpus_dir.name
        corpora[corpus] = read_description(corpus_dir / "config.yml")
        doc_files = sorted((corpus_dir / "docs").glob("*.md"))
        if not doc_files:
            raise IngestError(f"{corpus_dir / 'docs'}: no .md documents")
        for doc_file in doc_files:
            try:
                markdown = doc_file.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise IngestError(f"{doc_file}: not valid UTF-8 ({exc.reason})") from None
            pieces = (
                window_chunks(markdown) if regression == "chunking" else section_chunks(markdown, chunk_words)
            )
            if not pieces:
                raise IngestError(f"{doc_file}: no text")
            for number, piece in enumerate(pieces):
                chunks.append(
                    {
                        "corpus": corpus,
                        "source": f"{corpus}/{doc_file.name}#{number}",
                        **piece,
                    }
                )
    chunking = "fixed-window" if regression == "chunking" else "sections"
    return {"chunking": chunking, "chunk_words": chunk_words, "corpora": corpora, "chunks": chunks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-words", type=int, default=120, help="largest chunk, in words (default 120)")
    args = parser.parse_args()
    try:
        if args.chunk_words < 20:
            raise IngestError("--chunk-words must be at least 20")
        index = build_index(args.chunk_words, regression_switch())
    except IngestError as exc:
        print(f"ingest: error: {exc}", file=sys.stderr)
        return 1
    INDEX_FILE.parent.mkdir(exist_ok=True)
    temporary = INDEX_FILE.with_suffix(".tmp")
    temporary.write_text(json.dumps(index, indent=1, ensure_ascii=False), encoding="utf-8")
    temporary.replace(INDEX_FILE)  # atomic: a running server never reads half a file
    print(
        f"ingest: {len(index['chunks'])} chunks ({index['chunking']}) from "
        f"{len(index['corpora'])} corpora -> {INDEX_FILE.relative_to(EXAMPLES)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
