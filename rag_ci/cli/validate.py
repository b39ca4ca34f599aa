"""`rag-ci validate`: the config, the question set and the routing checked without calling
anything. Its own module, so that it starts without the run's and the comparison's stack
(rag_ci.cli.lazy)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import VALIDATE_EXIT_CODES, user_errors

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default="rag-ci.yml",
    show_default=True,
    help="rag-ci.yml to use.",
)


@click.command(epilog=VALIDATE_EXIT_CODES)
@config_option
@click.option(
    "--coverage",
    "show_coverage",
    is_flag=True,
    help="Also report corpora and documents (of corpora_dir, or a corpus's path:) no question cites, and thin tags.",
)
@click.option(
    "--min-tag-questions",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="With --coverage: a tag with fewer questions than this is reported.",
)
@user_errors
def validate(config_path: Path, show_coverage: bool, min_tag_questions: int) -> None:
    """Check the config, the question set and the routing, without calling anything.

    Drafts (`status: draft`, from `rag-ci questions import` or `generate`) are refused and
    listed, machine-written ones with their writer. Questions citing a document that no
    longer exists are warned about. A target `run` could not start is refused: a python
    entry naming no module or function (found, not imported), a program that is not there."""
    from rag_ci.core.questionset.documents import missing_citations
    from rag_ci.core.questionset.turns import conversations_note
    from rag_ci.files.corpus_files import corpus_folders, links_outside_note, read_corpora
    from rag_ci.files.project import load_project

    project = load_project(config_path)
    _refuse_a_target_run_cannot_start(project)
    questions = project.questions.questions
    cross = sum(1 for q in questions if len(q.doc_id) > 1)
    refusals = sum(1 for q in questions if q.is_refusal)
    written = sum(1 for q in questions if q.provenance is not None)
    echo(
        f"ok: {len(questions)} questions (v{project.questions.version}, {project.questions.content_hash}), "
        f"{len(project.corpora)} corpora ({', '.join(project.corpora)}), {cross} cross-corpus, {refusals} out-of-scope"
        + (f", {written} machine-written and reviewed" if written else "")
        + conversations_note(questions)
        + f"; target {project.config.target.kind}; judge {project.config.judge.provider}"
    )
    for name, corpus in project.corpora.items():
        if " ".join(corpus.description.split()).lower() in {f"{name} documents".lower(), "", "todo", "tbd"}:
            echo(
                f"warning: corpus {name}: its description {corpus.description!r} is the placeholder `init` "
                "wrote: say what its documents are about (reports show it; the writer that drafts questions reads it)",
                err=True,
            )
    files = read_corpora(corpus_folders(project.root, project.corpora), content=False)  # names only
    if note := links_outside_note(files.links_outside + project.links_outside):
        echo(note, err=True)
    for qid, source in missing_citations(((q.id, q.sources) for q in questions), files.index):
        echo(
            f"warning: {qid} cites {source}, which no document of corpus '{source.split('/', 1)[0]}' "
            f"matches (removed or renamed?): its reference may be stale",
            err=True,
        )
    for field, name in project.config.target.env_references():
        if name not in os.environ:
            echo(
                f"warning: {field} refers to ${{{name}}}, which is not set here: a run without it stops at start "
                f"(exit 2); set it, or name another variable",
                err=True,
            )
    if show_coverage:
        from rag_ci.core.questionset.coverage import coverage, render_coverage

        echo(render_coverage(coverage(project.questions, project.corpora, files.paths(), min_tag_questions)))


def _refuse_a_target_run_cannot_start(project) -> None:
    """A python entry that names no module or function, a program that is not there: `run`
    would stop at start (rag_ci.cli.validate_target); a build step may make it (a warning)."""
    from rag_ci.cli.validate_target import target_problems
    from rag_ci.errors import ValidationError

    errors, warnings = target_problems(project.config.target, project.root, config_path=project.config_path)
    for warning in warnings:
        echo(f"warning: {warning}", err=True)
    if errors:
        raise ValidationError(errors)
