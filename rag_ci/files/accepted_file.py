"""Reading the accepted file (rag_ci.core.review.accepted) from disk, for the CLI and the action."""

from __future__ import annotations

from pathlib import Path

from rag_ci.core.config import Config
from rag_ci.core.review.accepted import Acceptance, parse_accepted
from rag_ci.errors import RagCiError


def read_accepted(path: Path, *, required: bool, name: str | None = None) -> tuple[Acceptance, ...]:
    """The entries of `path`; none when it does not exist and is not `required`. `name` is how
    reports name the file (the repository-relative path in the action)."""
    if not path.exists():
        if required:
            raise RagCiError(f"{path}: no such accepted file")
        return ()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RagCiError(f"{path}: cannot read the accepted file: {exc}") from None
    return parse_accepted(text, name or str(path))


def accepted_path(config: Config, config_path: Path) -> Path:
    """gate.accepted, relative to the folder of the question set (itself relative to the config)."""
    questions = config_path.parent / config.questions
    return questions.parent / config.gate.accepted
