"""The project: a loaded, validated rag-ci.yml with its question set and routing table.

Reading and validating the files is all it does; replaying the questions is rag_ci.run.engine's job.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.config import Config, CorpusSpec, JudgeConfig, parse_config
from rag_ci.core.questionset.questions import QuestionSet, parse_question_set
from rag_ci.errors import RagCiError, ValidationError


@dataclass(frozen=True)
class Project:
    """A loaded, validated rag-ci.yml with its question set and routing table."""

    config_path: Path
    config: Config
    corpora: dict[str, CorpusSpec]
    questions: QuestionSet
    links_outside: int = 0  # corpora_dir sub-folders that are links leaving it: skipped

    @property
    def root(self) -> Path:
        return self.config_path.parent

    def with_judge(self, judge: JudgeConfig) -> Project:
        return dataclasses.replace(self, config=self.config.model_copy(update={"judge": judge}))


MAX_FILE_BYTES = 256 * 1024 * 1024  # a question set of 100,000 questions is ~50 MB


def read_file(path: Path, what: str) -> str:
    """A regular file's text, read up to MAX_FILE_BYTES: a device (/dev/zero) would fill the
    memory, a FIFO would block for ever, a folder is no file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise RagCiError(f"{what} not found: {path}") from None
    except OSError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RagCiError(f"cannot read {what} {path}: not a regular file (a device, a FIFO or a folder)")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise RagCiError(f"cannot read {what} {path}: larger than {MAX_FILE_BYTES // 2**20} MB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RagCiError(f"cannot read {what} {path}: {exc}") from None


def question_set_path(config_path: Path, text: str, questions: str) -> Path:
    """Where `questions:` points, inside the repository (its links resolved): a question set
    elsewhere (`/dev/zero`, `/proc/self/environ`, a file of another checkout) is refused,
    naming rag-ci.yml's line."""
    from rag_ci.core.base.yamlsrc import line_of, load_yaml

    path = config_path.parent / questions
    repository = repository_root(config_path.parent)
    if leaves(path, repository):
        line = line_of(load_yaml(text, str(config_path)), "questions")
        where = f"{config_path}:{line}" if line else str(config_path)
        raise ValidationError(
            [
                f"{where}: questions {questions!r} is outside the repository ({repository}): "
                "the question set must be a file of the repository under review"
            ]
        )
    return path


def leaves(path: Path, folder: Path) -> bool:
    """Does `path`, its links resolved, lead outside `folder` (itself resolved)?"""
    try:
        return not path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a link loop
        return True


def corpora_dir_links_outside(folder: Path) -> int:
    """How many sub-folders of `corpora_dir` are links leading outside it (never followed)."""
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.iterdir() if p.is_symlink() and leaves(p, folder))


def scan_corpora_dir(folder: Path) -> dict[str, CorpusSpec]:
    """Each sub-folder holding a config.yml is one corpus, named after the folder; a
    sub-folder that is a link leading outside `folder` is skipped: a contributed link
    must not make rag-ci read (and `generate` send to a writer) files from elsewhere."""
    if not folder.is_dir():
        raise RagCiError(f"corpora_dir not found: {folder}")
    corpora: dict[str, CorpusSpec] = {}
    for sub in sorted(p for p in folder.iterdir() if not leaves(p, folder) and (p / "config.yml").is_file()):
        from rag_ci.core.base.yamlsrc import load_yaml, to_plain

        if leaves(sub / "config.yml", sub):
            continue
        data = (
            to_plain(load_yaml(read_file(sub / "config.yml", "corpus config"), str(sub / "config.yml"))) or {}
        )
        description = str(data.get("description", "")) if isinstance(data, dict) else ""
        corpora[sub.name] = CorpusSpec(description=description, path=str(sub))
    if not corpora:
        raise RagCiError(f"corpora_dir {folder} has no sub-folder with a config.yml")
    return corpora


def repository_root(folder: Path) -> Path:
    """The git checkout holding `folder` (its nearest ancestor with a `.git`), else `folder`."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def _corpora_of_dir(config_path: Path, text: str, corpora_dir: str) -> dict[str, CorpusSpec]:
    """`corpora_dir`, inside the repository: its errors name rag-ci.yml and the line."""
    from rag_ci.core.base.yamlsrc import line_of, load_yaml

    line = line_of(load_yaml(text, str(config_path)), "corpora_dir")
    where = f"{config_path}:{line}" if line else str(config_path)
    folder = (config_path.parent / corpora_dir).resolve()
    repository = repository_root(config_path.parent)
    if not folder.is_relative_to(repository):
        raise ValidationError(
            [
                f"{where}: corpora_dir {corpora_dir!r} is {folder}, outside the repository ({repository}): "
                "the corpora must be files of the repository under review"
            ]
        )
    try:
        return scan_corpora_dir(folder)
    except RagCiError as exc:
        raise ValidationError([f"{where}: {exc}"]) from None


def _refuse_corpus_paths_outside(config_path: Path, text: str, corpora: dict[str, CorpusSpec]) -> None:
    """A corpus's `path:` must stay inside the repository (its links resolved)."""
    from rag_ci.core.base.yamlsrc import line_of, load_yaml

    repository = repository_root(config_path.parent)
    errors = []
    for name, spec in corpora.items():
        if not spec.path:
            continue
        folder = config_path.parent / spec.path
        if not leaves(folder, repository):
            continue
        node = load_yaml(text, str(config_path))
        try:
            line = line_of(node["corpora"][name], "path")
        except (KeyError, TypeError):
            line = None
        where = f"{config_path}:{line}" if line else str(config_path)
        errors.append(
            f"{where}: corpus '{name}': path {spec.path!r} is {folder.resolve()}, outside the repository "
            f"({repository}): the corpora must be files of the repository under review"
        )
    if errors:
        raise ValidationError(errors)


def corpora_table(config_path: Path, text: str, config: Config) -> tuple[dict[str, CorpusSpec], int]:
    """The routing table (from `corpora:` or `corpora_dir:`), every folder inside the
    repository, and how many `corpora_dir` sub-folders were links leaving it (skipped)."""
    if config.corpora:
        corpora = dict(config.corpora)
        _refuse_corpus_paths_outside(config_path, text, corpora)
        return corpora, 0
    if config.corpora_dir:
        corpora = _corpora_of_dir(config_path, text, config.corpora_dir)
        return corpora, corpora_dir_links_outside(config_path.parent / config.corpora_dir)
    raise ValidationError([f"{config_path}: no corpora: add a `corpora:` table or `corpora_dir:`"])


def load_project(config_path: Path) -> Project:
    """Read and validate rag-ci.yml, the routing table and the question set."""
    config_path = Path(config_path).resolve()
    text = read_file(config_path, "config")
    config = parse_config(text, str(config_path))
    corpora, links_outside = corpora_table(config_path, text, config)
    questions_path = question_set_path(config_path, text, config.questions)
    questions = parse_question_set(
        read_file(questions_path, "question set"), str(questions_path), set(corpora)
    )
    return Project(
        config_path=config_path,
        config=config,
        corpora=corpora,
        questions=questions,
        links_outside=links_outside,
    )
