"""`rag-ci questions ...`: the question set's own life (docs/questions.md).

`import LOG.jsonl` adds real questions as drafts; `generate` drafts questions from the
corpora with a writer model; `review` writes the page a human approves, edits or rejects
drafts on; `apply FILE` merges what the page exported.
"""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.cli.help import ListedAsRegistered
from rag_ci.cli.questions_decide import approve, reject
from rag_ci.cli.questions_review import (
    changing_the_set,
    drafts_to_review,
    edit,
    interactive_review,
    refuse_unknown_sources,
)
from rag_ci.cli.questions_review import config_option as _config_option
from rag_ci.cli.questions_review import questions_option as _questions_option
from rag_ci.errors import RagCiError


@click.group("questions", cls=ListedAsRegistered)  # import, generate, review, apply, then the edits
def questions() -> None:
    """Grow the question set: from real questions, or drafted from the corpora and reviewed."""


@questions.command("import")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default="rag-ci.yml",
    show_default=True,
    help="rag-ci.yml whose `questions:` file receives the drafts.",
)
@click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The questions.yml to append to (instead of the config's).",
)
@click.option(
    "--prefix",
    default="LOG-",
    show_default=True,
    help="Prefix of the new ids (numbered after the highest one).",
)
@user_errors
def import_log(log: Path, config_path: Path, questions_path: Path | None, prefix: str) -> None:
    """Append one draft (fresh id, `status: draft`) per question of LOG.jsonl
    (`{question, corpora?, answer?, feedback?}` per line) to the question set, keeping its
    comments and layout; questions already in the set are skipped. `validate` refuses
    drafts until a human fills in reference, doc_id and sources and removes the status."""
    from rag_ci.core.review.questions_import import append_drafts, parse_log
    from rag_ci.files.atomic import write_text_keeping_newlines
    from rag_ci.files.lock import QuestionSetLock

    try:
        if questions_path is None:
            from rag_ci.core.config import parse_config

            if not config_path.is_file():
                raise RagCiError(f"config not found: {config_path} (or pass --questions FILE)")
            config = parse_config(config_path.read_text(encoding="utf-8"), str(config_path))
            questions_path = config_path.parent / config.questions
        if not questions_path.is_file():
            raise RagCiError(f"question set not found: {questions_path}")
        logged = parse_log(log.read_text(encoding="utf-8"), str(log))
        with QuestionSetLock(questions_path):
            result = append_drafts(
                questions_path.read_text(encoding="utf-8"), str(questions_path), logged, prefix=prefix
            )
            if result.added:
                write_text_keeping_newlines(questions_path, result.text)
    except UnicodeDecodeError as exc:
        raise UserError(str(exc)) from None
    echo(
        f"{len(result.added)} drafts added to {questions_path} ({', '.join(result.added) or 'none'}); "
        f"{result.skipped} already in the set"
    )
    if result.added:
        echo(
            "Fill in reference, doc_id and sources, then remove `status: draft`: "
            "`rag-ci validate` refuses drafts and lists them."
        )


@questions.command("generate")
@_config_option
@click.option(
    "--writer",
    "writer_spec",
    metavar="PROVIDER:MODEL[@BASE_URL]",
    help="The model that drafts (instead of rag-ci.yml's `writer:`), e.g. openai:gpt-4.1-mini-2025-04-14; "
    "`fake` drafts offline with a fixed policy (a dry run). Never of the judge's family.",
)
@click.option(
    "--per-document",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    help="Drafts per document (plain, misspelt or vague).",
)
@click.option(
    "--corpus", "corpora", multiple=True, metavar="NAME", help="Only this corpus (repeatable; default: all)."
)
@click.option(
    "--uncovered-only",
    is_flag=True,
    help="Only the documents no question cites (as `validate --coverage` lists them).",
)
@click.option(
    "--adversarial",
    type=click.FloatRange(0, 1),
    default=0.25,
    show_default=True,
    help="At least this share of the drafts is adversarial: misspelt, vague, out of scope, cross-corpus.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seeds the mix, the evolutions and the typos."
)
@_questions_option
@click.option(
    "--estimate", is_flag=True, help="Print the writer calls, tokens and dollars it would take; call nothing."
)
@click.option(
    "--time-limit",
    "time_limit_s",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help="Stop drafting after this long, keeping what was drafted (default: writer.time_limit_s, 1800).",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show progress on stderr.")
@user_errors
def generate(
    config_path: Path,
    writer_spec: str | None,
    per_document: int,
    corpora: tuple[str, ...],
    uncovered_only: bool,
    adversarial: float,
    seed: int,
    questions_path: Path | None,
    estimate: bool,
    time_limit_s: float | None,
    progress: bool,
) -> None:
    """Draft questions from the corpora's documents with a writer model, through DeepEval's
    Synthesizer, and append them to the question set as drafts (`status: draft`), each with
    doc_id, sources, reference, keywords, tags and provenance. A writer of the judge's family
    is refused before any call. `validate` refuses the drafts until they are reviewed."""
    from rag_ci.core.questionset.draft_plan import plan_drafts
    from rag_ci.drafting.draft_report import bounds_line, estimate_lines, summary
    from rag_ci.drafting.question_drafts import documents_to_draft, scope_documents, writer_config
    from rag_ci.drafting.question_drafts import generate as run_generate
    from rag_ci.drafting.question_sources import read_sources
    from rag_ci.drafting.writer import Writer, check_writer
    from rag_ci.files.corpus_files import links_outside_note

    try:
        sources = read_sources(config_path, questions_path, corpora)
        writer_cfg = writer_config(sources.config, writer_spec)
        check = check_writer(sources.config, writer_cfg, estimate=estimate)  # before anything is called
        for warning in check.warnings:
            echo(f"warning: {warning}", err=True)
        limit = time_limit_s or writer_cfg.time_limit_s
        documents, skipped = documents_to_draft(sources, uncovered_only, limit)
        if note := links_outside_note(sources.files.links_outside):
            echo(note, err=True)
        if not documents:
            raise RagCiError(
                "no documents to draft from"
                + (
                    " (every document is cited: drop --uncovered-only)"
                    if uncovered_only
                    else ": the corpora need a folder (`corpora_dir:` or a corpus's `path:`) of text files"
                )
            )
        plan = plan_drafts(
            documents,
            per_document=per_document,
            adversarial=adversarial,
            seed=seed,
            descriptions={name: spec.description for name, spec in sources.corpora.items()},
            scope=scope_documents(sources),
        )
        if skipped:
            echo(
                f"note: {skipped} document(s) hold no prose to draft from (binary such as PDF or images, source code, "
                "data, or nothing but markup)",
                err=True,
            )
        if estimate:
            for line in estimate_lines(plan, writer_cfg, check.label):
                echo(line)
            return
        echo(bounds_line(writer_cfg, limit), err=True)
        outcome = run_generate(
            sources, plan, Writer(writer_cfg, check), seed=seed, progress=progress, time_limit_s=limit
        )
    except UnicodeDecodeError as exc:
        raise UserError(str(exc)) from None
    for line in summary(outcome, sources.questions_path):
        echo(line)


@questions.command("review")
@_config_option
@_questions_option
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default="rag-ci-review",
    show_default=True,
    help="Folder to write review.html (or, with --cli, reviewed.yml) into.",
)
@click.option(
    "--cli",
    "in_terminal",
    is_flag=True,
    help="Review at the prompt instead of on a page: each draft in turn, "
    "then the decisions are saved as reviewed.yml and applied.",
)
@click.option("--reviewer", metavar="NAME", help="With --cli: who decided (asked when not given).")
@user_errors
def review(
    config_path: Path, questions_path: Path | None, out_dir: Path, in_terminal: bool, reviewer: str | None
) -> None:
    """Write a static page listing each draft beside the passage it was drafted from, to
    approve, edit (question, reference, keywords, doc_id, sources, expect, tags) or reject;
    it saves reviewed.yml, which `rag-ci questions apply` merges. Without a browser: --cli,
    or `rag-ci questions approve/reject/edit`."""
    if in_terminal:
        interactive_review(config_path, questions_path, out_dir, reviewer)
        return
    from rag_ci.core.review.draft_page import PAGE_FILE, REVIEWED_FILE, render_draft_page
    from rag_ci.files.atomic import write_text_atomic

    drafts = drafts_to_review(config_path, questions_path)
    if drafts is None:
        return
    sources, entries, choices = drafts
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / PAGE_FILE
    write_text_atomic(
        page, render_draft_page(entries, sources.questions_path.name, list(sources.corpora), choices)
    )
    echo(
        f"{len(entries)} drafts to review: open {page}, decide, save {REVIEWED_FILE}, then "
        f"`rag-ci questions apply {REVIEWED_FILE}`"
    )


@questions.command("apply")
@click.argument("reviewed", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_config_option
@_questions_option
@user_errors
def apply(reviewed: Path, config_path: Path, questions_path: Path | None) -> None:
    """Merge the review page's reviewed.yml into the question set: approved drafts take their
    edits and lose `status: draft`, rejected ones are removed, undecided ones stay drafts."""
    from rag_ci.core.questionset.questions import parse_question_set
    from rag_ci.core.review.draft_review import apply_reviewed, parse_reviewed
    from rag_ci.files.atomic import write_text_keeping_newlines

    try:
        decisions = parse_reviewed(reviewed.read_text(encoding="utf-8"), str(reviewed))
    except UnicodeDecodeError as exc:
        raise UserError(str(exc)) from None
    with changing_the_set(config_path, questions_path) as sources:
        refuse_unknown_sources(sources, decisions)
        drafts = {q.id: q for q in sources.questions.questions if q.status == "draft"}
        result = apply_reviewed(
            sources.questions_text,
            str(sources.questions_path),
            drafts,
            decisions,
            str(reviewed),
            corpora=set(sources.corpora),
        )
        # Still a valid set (drafts allowed): an edit never leaves questions.yml unreadable.
        parse_question_set(result.text, str(sources.questions_path), set(sources.corpora), allow_drafts=True)
        if result.approved or result.rejected:
            write_text_keeping_newlines(sources.questions_path, result.text)
    echo(
        f"{len(result.approved)} approved ({len(result.edited)} edited), {len(result.rejected)} rejected, "
        f"{len(result.undecided)} still drafts, in {sources.questions_path}"
    )
    if result.approved:
        echo("Bump `version` in the question set when references changed; `rag-ci validate` checks the rest.")


for _command in (approve, reject, edit):  # a review without a browser (questions_decide, questions_review)
    questions.add_command(_command)
