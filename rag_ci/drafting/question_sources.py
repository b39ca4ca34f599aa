"""A project read for drafting or for reviewing drafts: the config, the question set (drafts
allowed) and the corpora's files. Its own module: `rag-ci questions approve` reads this and
nothing of the drafting pipeline (passages, dedupe), so it starts at once (issue 55)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.config import Config, CorpusSpec, parse_config
from rag_ci.core.questionset.questions import QuestionSet, parse_question_set
from rag_ci.core.questionset.yaml_edit import NEW_SET
from rag_ci.errors import RagCiError
from rag_ci.files.corpus_files import CorpusFiles, corpus_folders, read_corpora
from rag_ci.files.project import corpora_table, question_set_path, read_file


@dataclass(frozen=True)
class Sources:
    """A project read for drafting: the config, the set (drafts allowed), the corpora's files."""

    config_path: Path
    config: Config
    corpora: dict[str, CorpusSpec]
    questions_path: Path
    questions_text: str
    questions: QuestionSet
    files: CorpusFiles  # every corpus with a folder: out-of-scope drafts must be out of all of them
    chosen: tuple[str, ...] = ()  # the corpora to draft from
    new_set: bool = False


def read_sources(
    config_path: Path, questions_path: Path | None = None, corpora: tuple[str, ...] = ()
) -> Sources:
    """Config, question set and the documents of the chosen corpora (all when none is named)."""
    config_path = Path(config_path).resolve()
    if not config_path.is_file():
        raise RagCiError(f"config not found: {config_path}")
    config_text = config_path.read_text(encoding="utf-8")
    config = parse_config(config_text, str(config_path))
    root = config_path.parent
    # every folder inside the repository
    table, links_outside = corpora_table(config_path, config_text, config)
    unknown = [c for c in corpora if c not in table]
    if unknown:
        raise RagCiError(f"--corpus {', '.join(unknown)}: no such corpus (corpora: {', '.join(table)})")
    folders = corpus_folders(root, table)
    missing = [name for name in corpora if name not in folders]
    if missing:
        raise RagCiError(
            f"corpus {', '.join(missing)} has no folder to read documents from: give it a `path:` "
            "(relative to rag-ci.yml) or use `corpora_dir:`"
        )
    path = questions_path or question_set_path(config_path, config_text, config.questions)
    new_set = not path.exists() and not path.is_symlink()
    text = NEW_SET if new_set else read_file(path, "question set")
    questions = (
        QuestionSet(version=1, questions=(), source=str(path))
        if new_set
        else parse_question_set(text, str(path), set(table), allow_drafts=True)
    )
    files = read_corpora(folders)
    files = dataclasses.replace(files, links_outside=files.links_outside + links_outside)
    return Sources(config_path, config, table, path, text, questions, files, tuple(corpora or table), new_set)
