"""The project: a loaded, validated rag-ci.yml with its question set and routing table.

Reading and validating the files is all it does; replaying the questions is rag_ci.engine's job.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.questionset.config import Config, CorpusSpec, JudgeConfig, parse_config
from rag_ci.core.questionset.questions import QuestionSet, parse_question_set
from rag_ci.errors import RagCiError, ValidationError


@dataclass(frozen=True)
class Project:
    """A loaded, validated rag-ci.yml with its question set and routing table."""

    config_path: Path
    config: Config
    corpora: dict[str, CorpusSpec]
    questions: QuestionSet

    @property
    def root(self) -> Path:
        return self.config_path.parent

    def with_judge(self, judge: JudgeConfig) -> "Project":
        return dataclasses.replace(self, config=self.config.model_copy(update={"judge": judge}))


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RagCiError(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc}") from None


def scan_corpora_dir(folder: Path) -> dict[str, CorpusSpec]:
    """Each sub-folder holding a config.yml is one corpus, named after the folder."""
    if not folder.is_dir():
        raise RagCiError(f"corpora_dir not found: {folder}")
    corpora: dict[str, CorpusSpec] = {}
    for sub in sorted(p for p in folder.iterdir() if (p / "config.yml").is_file()):
        from rag_ci.core.questionset.yamlsrc import load_yaml, to_plain

        data = to_plain(load_yaml(_read(sub / "config.yml", "corpus config"), str(sub / "config.yml"))) or {}
        description = str(data.get("description", "")) if isinstance(data, dict) else ""
        corpora[sub.name] = CorpusSpec(description=description, path=str(sub))
    if not corpora:
        raise RagCiError(f"corpora_dir {folder} has no sub-folder with a config.yml")
    return corpora


def load_project(config_path: Path) -> Project:
    """Read and validate rag-ci.yml, the routing table and the question set."""
    config_path = Path(config_path).resolve()
    config = parse_config(_read(config_path, "config"), str(config_path))
    root = config_path.parent
    corpora = dict(config.corpora) if config.corpora else scan_corpora_dir(root / config.corpora_dir) if config.corpora_dir else {}
    if not corpora:
        raise ValidationError([f"{config_path}: no corpora: add a `corpora:` table or `corpora_dir:`"])
    questions_path = root / config.questions
    questions = parse_question_set(_read(questions_path, "question set"), str(questions_path), set(corpora))
    return Project(config_path=config_path, config=config, corpora=corpora, questions=questions)
