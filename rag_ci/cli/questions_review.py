"""Reviewing drafts without a browser (docs/questions.md, "Review in the terminal").

`rag-ci questions approve ID…`, `reject ID…` and `edit ID --sources … --doc-id …` decide
and apply at once; `rag-ci questions review --cli` asks about each draft in turn and
saves the same reviewed.yml the page saves, then applies it. All of them go through
`apply_reviewed`, like `questions apply`: the same checks, the comments of questions.yml kept.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError, user_errors

questions_option = click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The questions.yml to use (instead of the config's).",
)
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default="rag-ci.yml",
    show_default=True,
    help="rag-ci.yml (corpora, judge, writer, question set).",
)
reviewer_option = click.option(
    "--reviewer", metavar="NAME", help="Who decided: recorded in the draft's provenance (reviewed_by)."
)


def read_set_with_drafts(config_path: Path, questions_path: Path | None):
    """The project read for reviewing its drafts; a missing question set is the user's error."""
    from rag_ci.drafting.question_sources import read_sources

    try:
        sources = read_sources(config_path, questions_path)
    except UnicodeDecodeError as exc:
        raise UserError(str(exc)) from None
    if sources.new_set:
        raise UserError(f"question set not found: {sources.questions_path}")
    return sources


@contextmanager
def changing_the_set(config_path: Path, questions_path: Path | None) -> Iterator[Any]:
    """The project read for a change of its question set, under the set's lock
    (rag_ci.files.lock.QuestionSetLock): read again when another command changed the set
    meanwhile, so that its change is kept, not written over."""
    from rag_ci.files.lock import QuestionSetLock

    sources = read_set_with_drafts(config_path, questions_path)
    with QuestionSetLock(sources.questions_path):
        if _text_now(sources.questions_path) != sources.questions_text:
            sources = read_set_with_drafts(config_path, questions_path)
        yield sources


def _text_now(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _drafts(sources) -> dict[str, Any]:
    return {q.id: q for q in sources.questions.questions if q.status == "draft"}


def refuse_unknown_sources(sources, reviewed) -> None:
    """An edited `sources` entry must name a document of a corpus of the routing table: not a
    path outside the corpora (`../../etc/passwd`, `/abs`), not a file that is not there."""
    from rag_ci.core.questionset.documents import missing_citations
    from rag_ci.errors import ValidationError

    problems = []
    for decision in reviewed.decisions:
        cited = tuple(decision.edits.get("sources", ()))
        for source in cited:
            corpus, _, rest = source.partition("/")
            if (
                corpus not in sources.corpora
                or not rest
                or source.startswith("/")
                or ".." in source.split("/")
            ):
                problems.append(
                    f"{decision.id}: source {source!r} is no document of a corpus "
                    f"(corpora: {', '.join(sources.corpora)}; a source reads CORPUS/PATH)"
                )
        known = [s for s in cited if s.partition("/")[0] in sources.corpora and ".." not in s.split("/")]
        problems += [
            f"{qid}: source {source!r}: no document of corpus '{source.split('/', 1)[0]}' matches it"
            for qid, source in missing_citations([(decision.id, known)], sources.files.index)
        ]
    if problems:
        raise ValidationError(problems)


def apply_decisions(sources, reviewed, label: str) -> None:
    """Apply, check the set still reads, write it, and say what happened (as `questions apply` does)."""
    from rag_ci.core.questionset.questions import parse_question_set
    from rag_ci.core.review.draft_review import apply_reviewed
    from rag_ci.files.atomic import write_text_keeping_newlines

    refuse_unknown_sources(sources, reviewed)
    result = apply_reviewed(
        sources.questions_text,
        str(sources.questions_path),
        _drafts(sources),
        reviewed,
        label,
        corpora=set(sources.corpora),
    )
    parse_question_set(result.text, str(sources.questions_path), set(sources.corpora), allow_drafts=True)
    if result.text != sources.questions_text:
        write_text_keeping_newlines(sources.questions_path, result.text)
    echo(
        f"{len(result.approved)} approved ({len(result.edited)} edited), {len(result.rejected)} rejected, "
        f"{len(result.undecided)} still drafts, in {sources.questions_path}"
    )


def decide(
    config_path: Path,
    questions_path: Path | None,
    ids: tuple[str, ...],
    decision: str | None,
    reviewer: str | None,
    edits: dict[str, Any] | None = None,
    chosen: Any = None,  # a rag_ci.core.review.draft_selection.DraftFilter
) -> None:
    import unicodedata

    from rag_ci.core.review.draft_review import Decision, Reviewed
    from rag_ci.core.review.draft_selection import select_drafts

    with changing_the_set(config_path, questions_path) as sources:
        drafts = _drafts(sources)
        wanted = [unicodedata.normalize("NFC", i) for i in ids]
        if chosen is not None:  # ids, then the drafts of --all, a tag, a corpus or a kind
            try:
                wanted = select_drafts(wanted, chosen, drafts)
            except ValueError as exc:
                raise UserError(f"{sources.questions_path}: {exc}") from None
        unknown = [i for i in wanted if i not in drafts]
        if unknown:
            raise UserError(
                f"not a draft of {sources.questions_path}: {', '.join(unknown)} "
                f"(drafts: {', '.join(list(drafts)[:10]) or 'none'}{', …' if len(drafts) > 10 else ''})"
            )
        decisions = tuple(
            Decision(i, drafts[i].content_hash, decision, edits or {}) for i in dict.fromkeys(wanted)
        )
        apply_decisions(sources, Reviewed(reviewer, decisions), "the command line")


@click.command("edit")
@click.argument("qid", metavar="ID")
@click.option("--question", help="The question's new words.")
@click.option("--reference", help="The new reference answer.")
@click.option(
    "--keywords",
    "keywords",
    multiple=True,
    metavar="WORDS",
    help="A keyword (repeat for several; replaces the list).",
)
@click.option(
    "--doc-id",
    "doc_id",
    multiple=True,
    metavar="CORPUS",
    help="A corpus of the routing table (repeat for a cross-corpus question).",
)
@click.option(
    "--sources",
    "sources",
    multiple=True,
    metavar="DOC",
    help="A document that holds the answer, e.g. du2/battery.md (repeat).",
)
@click.option(
    "--expect",
    type=click.Choice(["answer", "refusal"]),
    help="refusal: out of scope, the right answer is a refusal.",
)
@click.option("--tags", "tags", multiple=True, metavar="TAG", help="A tag (repeat; replaces the list).")
@click.option(
    "--approve", "approve_too", is_flag=True, help="Approve it too (otherwise it stays a draft, edited)."
)
@reviewer_option
@config_option
@questions_option
@user_errors
def edit(
    qid: str,
    question: str | None,
    reference: str | None,
    keywords: tuple[str, ...],
    doc_id: tuple[str, ...],
    sources: tuple[str, ...],
    expect: str | None,
    tags: tuple[str, ...],
    approve_too: bool,
    reviewer: str | None,
    config_path: Path,
    questions_path: Path | None,
) -> None:
    """Change a draft's fields; lists (--keywords, --doc-id, --sources, --tags) replace the
    draft's whole list. The same checks as the review page's export: a doc_id must be a corpus."""
    from rag_ci.core.review.draft_review import read_edits
    from rag_ci.errors import ValidationError

    given = {
        "question": question,
        "reference": reference,
        "expect": expect,
        "keywords": list(keywords),
        "doc_id": list(doc_id),
        "sources": list(sources),
        "tags": list(tags),
    }
    given = {k: v for k, v in given.items() if v not in (None, [])}
    if not given:
        raise UserError(
            "nothing to change: give --question, --reference, --keywords, --doc-id, --sources, --expect or --tags"
        )
    edits, problems = read_edits(given)
    if problems:
        raise ValidationError([f"{qid}: {p}" for p in problems])
    decide(config_path, questions_path, (qid,), "approve" if approve_too else None, reviewer, edits)


def _show(entry: dict[str, Any], number: int, total: int) -> None:
    where = " + ".join(entry["doc_id"]) or "out of scope (expect: refusal)"
    echo(f"\n[{number}/{total}] {entry['id']} · {where} · {', '.join(entry['tags'])}")
    echo(f"  question:  {entry['question']}")
    if entry["expect"] != "refusal" or entry["reference"]:
        echo(f"  reference: {entry['reference'] or ''}")
        echo(f"  keywords:  {'; '.join(entry['keywords'])}")
    echo(f"  sources:   {', '.join(entry['sources'])}")
    if entry["note"]:
        echo(f"  note: {entry['note']}")
    _show_passages(entry["passages"])


def _show_passages(passages: list[dict[str, Any]]) -> None:
    """Each passage whole: the reviewer decides on all of it. On a terminal the screen cannot
    hold, through the pager (click's: $PAGER, else less/more), its lines made inert as echo's."""
    lines = [
        line
        for passage in passages
        for line in [
            f"  --- passage {passage['label']} ---",
            *(f"  | {t}" for t in passage["text"].splitlines()),
        ]
    ]
    height = shutil.get_terminal_size((80, 24)).lines
    if len(lines) > height - 8 and sys.stdin.isatty() and sys.stdout.isatty():
        from rag_ci.safety.logsafe import neutralise

        click.echo_via_pager("\n".join(neutralise(line) for line in lines) + "\n")
        return
    for line in lines:
        echo(line)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(";") if part.strip()]


def _ask(label: str, current: str) -> str:
    """One field at the prompt; Enter keeps `current`. The value is shown through the log
    boundary (echo), never as click's `[default]`: it is text rag-ci did not write."""
    echo(f"  {label} now: {current or '(none)'}")
    answer = click.prompt(f"  {label}", default="", show_default=False)
    return answer if answer.strip() else current


def _ask_edits(entry: dict[str, Any], corpora: list[str], documents: dict[str, list[str]]) -> dict[str, Any]:
    """Each field with its value as the default (Enter keeps it); lists are `;`-separated, `-` empties one."""
    from rag_ci.core.review.draft_review import read_edits

    while True:
        given: dict[str, Any] = {"question": _ask("question", entry["question"])}
        expect = _ask("expect (answer or refusal)", entry["expect"]).strip()
        given["expect"] = expect
        given["doc_id"] = _split(
            _ask(
                f"doc_id (corpora: {', '.join(corpora)}; `;` between several, `-` for none)",
                "; ".join(entry["doc_id"]),
            )
        )
        known = [name for c in given["doc_id"] for name in documents.get(c, [])]
        if known:
            echo(f"  documents: {', '.join(known[:40])}{' …' if len(known) > 40 else ''}")
        given["sources"] = _split(_ask("sources (`;` between several)", "; ".join(entry["sources"])))
        if expect != "refusal":
            given["reference"] = _ask("reference", entry["reference"] or "")
            given["keywords"] = _split(_ask("keywords (`;` between several)", "; ".join(entry["keywords"])))
        given["tags"] = _split(_ask("tags (`;` between several)", "; ".join(entry["tags"])))
        given = {k: [] if v == ["-"] else v for k, v in given.items() if v not in ("", None)}
        edits, problems = read_edits({k: v for k, v in given.items() if v != [] or k == "doc_id"})
        unknown = [c for c in edits.get("doc_id", ()) if c not in corpora]
        problems += [f"doc_id {c} is not a corpus of the routing table" for c in unknown]
        if not problems:
            return {
                k: v for k, v in edits.items() if v != (tuple(entry[k]) if isinstance(v, tuple) else entry[k])
            }
        echo("  " + "; ".join(problems) + ": again")


def drafts_to_review(config_path: Path, questions_path: Path | None):
    """(the project read for review, the drafts' review entries, the documents a source may name);
    None, said, when the set has no drafts. The page and the prompts show the same."""
    from rag_ci.core.review.draft_review import document_choices, review_entries
    from rag_ci.drafting.question_drafts import passages_by_hash

    sources = read_set_with_drafts(config_path, questions_path)
    documents = {f"{c}/{p}": text for (c, p), text in sources.files.texts.items()}
    entries = review_entries(sources.questions, passages_by_hash(sources.files), documents)
    if not entries:
        echo(f"no drafts in {sources.questions_path}: nothing to review")
        return None
    choices = document_choices(
        sources.files.paths(), [s for q in sources.questions.questions for s in q.sources]
    )
    return sources, entries, choices


def interactive_review(
    config_path: Path, questions_path: Path | None, out_dir: Path, reviewer: str | None
) -> None:
    """`questions review --cli`: approve, edit, reject or skip each draft at the prompt; the
    decisions are saved as reviewed.yml (the page's format) in `out_dir` and applied."""
    from rag_ci.core.review.draft_page import REVIEWED_FILE
    from rag_ci.core.review.draft_review import Decision, Reviewed, dump_reviewed
    from rag_ci.files.atomic import write_text_atomic

    drafts = drafts_to_review(config_path, questions_path)
    if drafts is None:
        return
    sources, entries, choices = drafts
    corpora = list(sources.corpora)
    reviewer = (
        reviewer
        or click.prompt("your name (recorded as reviewed_by)", default="", show_default=False).strip()
        or None
    )
    decisions = []
    echo(
        f"{len(entries)} drafts: [a]pprove, [e]dit then approve, [r]eject, [s]kip (stays a draft), [q]uit (keeps what you decided)"
    )
    for number, entry in enumerate(entries, 1):
        _show(entry, number, len(entries))
        answer = click.prompt("decision", type=click.Choice(["a", "e", "r", "s", "q"]), default="s")
        if answer == "q":
            break
        if answer == "s":
            continue
        edits = _ask_edits(entry, corpora, choices) if answer == "e" else {}
        decisions.append(
            Decision(entry["id"], entry["hash"], "reject" if answer == "r" else "approve", edits)
        )
    if not decisions:
        echo("nothing decided: the question set is unchanged")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = out_dir / REVIEWED_FILE
    write_text_atomic(saved, dump_reviewed(reviewer, decisions, sources.questions_path.name))
    echo(f"decisions saved in {saved}")
    with changing_the_set(config_path, questions_path) as sources:  # as it is now, not as it was when asked
        apply_decisions(sources, Reviewed(reviewer, tuple(decisions)), str(saved))
