"""`rag-ci questions import LOG.jsonl`: real questions enter the set as drafts (docs/questions.md)."""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.errors import RagCiError


@click.group("questions")
def questions() -> None:
    """Grow the question set from real questions."""


@questions.command("import")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--config", "config_path", type=click.Path(path_type=Path), default="rag-ci.yml", show_default=True,
              help="rag-ci.yml whose `questions:` file receives the drafts.")
@click.option("--questions", "questions_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The questions.yml to append to (instead of the config's).")
@click.option("--prefix", default="LOG-", show_default=True, help="Prefix of the new ids (numbered after the highest one).")
@user_errors
def import_log(log: Path, config_path: Path, questions_path: Path | None, prefix: str) -> None:
    """Append one draft (fresh id, `status: draft`) per question of LOG.jsonl
    (`{question, corpora?, answer?, feedback?}` per line) to the question set, keeping its
    comments and layout; questions already in the set are skipped. `validate` refuses
    drafts until a human fills in reference, doc_id and sources and removes the status."""
    from rag_ci.core.review.questions_import import append_drafts, parse_log
    from rag_ci.storage import write_text_atomic

    try:
        if questions_path is None:
            from rag_ci.core.questionset.config import parse_config

            if not config_path.is_file():
                raise RagCiError(f"config not found: {config_path} (or pass --questions FILE)")
            config = parse_config(config_path.read_text(encoding="utf-8"), str(config_path))
            questions_path = config_path.parent / config.questions
        if not questions_path.is_file():
            raise RagCiError(f"question set not found: {questions_path}")
        logged = parse_log(log.read_text(encoding="utf-8"), str(log))
        result = append_drafts(questions_path.read_text(encoding="utf-8"), str(questions_path), logged, prefix=prefix)
        if result.added:
            write_text_atomic(questions_path, result.text)
    except UnicodeDecodeError as exc:
        raise UserError(str(exc)) from None
    echo(f"{len(result.added)} drafts added to {questions_path} ({', '.join(result.added) or 'none'}); "
               f"{result.skipped} already in the set")
    if result.added:
        echo("Fill in reference, doc_id and sources, then remove `status: draft`: "
                   "`rag-ci validate` refuses drafts and lists them.")
