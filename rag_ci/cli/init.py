"""`rag-ci init`: a project from nothing (docs/getting-started.md; docs/questions.md, "Start from nothing").

Writes rag-ci.yml (the corpora found in the document folders, the target kind asked or
guessed), the four workflows users copy (shipped in rag_ci/templates/workflows/, copies of
this repository's own .github/workflows/rag-ci-*.yml with the "your repository" lines
already changed: rag_ci.cli.init_workflows), and an empty question set that `rag-ci
questions generate` fills. It never overwrites a file: when one exists, nothing is written
and the command says which.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError, user_errors
from rag_ci.cli.init_detect import detect_target, detected_settings
from rag_ci.cli.init_targets import default_settings, kinds_question, target_template
from rag_ci.cli.init_workflows import default_branch, rag_ci_workflow, users_workflows
from rag_ci.cli.validate_target import PLACEHOLDER_PATH
from rag_ci.core.config import TARGET_CONFIGS, parse_config
from rag_ci.errors import ValidationError

# Folders that usually hold a project's documents, in the order they are looked at.
DOCUMENT_FOLDERS = ("docs", "documents", "corpora", "data", "knowledge", "kb", "content")
DOCUMENT_SUFFIXES = {".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".adoc", ".pdf", ".json", ".csv"}
KINDS = tuple(TARGET_CONFIGS)  # each with its `target:` block: rag_ci.cli.init_targets
QUESTIONS_FILE = "questions.yml"
EMPTY_SET = """\
# The question set rag-ci replays on every pull request (docs/questions.md).
# Empty for now: `rag-ci questions generate` drafts questions from the corpora's documents,
# `rag-ci questions review` (or approve/reject/edit) turns drafts into questions.
version: 1
questions: []
"""


@dataclass(frozen=True)
class Corpus:
    name: str
    path: str  # relative to rag-ci.yml
    documents: int


def _documents_in(folder: Path) -> int:
    return sum(
        1
        for p in folder.rglob("*")
        if p.is_file()
        and p.suffix.lower() in DOCUMENT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def find_corpora(root: Path, docs: Path | None) -> list[Corpus]:
    """Each sub-folder of the documents folder that holds documents is a corpus; a documents
    folder without sub-folders of documents is one corpus. `docs`: the folder to use (else the
    first of DOCUMENT_FOLDERS that holds documents)."""
    candidates = [docs] if docs is not None else [root / name for name in DOCUMENT_FOLDERS]
    for base in candidates:
        if not base.is_dir():
            continue
        subs = [
            Corpus(_corpus_name(sub.name), _relative(sub, root), _documents_in(sub))
            for sub in sorted(base.iterdir())
            if sub.is_dir() and not sub.name.startswith(".") and _inside(sub, root)
        ]
        subs = [c for c in subs if c.documents]
        if subs:
            return _distinct_names(subs)
        if _documents_in(base) and _inside(base, root):
            return [Corpus(_corpus_name(base.name), _relative(base, root), _documents_in(base))]
    return []


def _inside(path: Path, root: Path) -> bool:
    """A folder (a symlink followed) inside the repository: rag-ci reads no document outside it."""
    return path.resolve().is_relative_to(root.resolve())


def _distinct_names(corpora: list[Corpus]) -> list[Corpus]:
    """`a b` and `a-b` both make `a-b`: the second becomes `a-b-2` (one key each in rag-ci.yml)."""
    seen: set[str] = set()
    out = []
    for corpus in corpora:
        name, n = corpus.name, 2
        while name.lower() in seen:
            name, n = f"{corpus.name}-{n}", n + 1
        seen.add(name.lower())
        out.append(Corpus(name, corpus.path, corpus.documents))
    return out


def _corpus_name(folder: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", folder).strip("-") or "docs"


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return folder.resolve().as_posix()


def _refuse_unwritable(files: dict[Path, str | None], root: Path) -> None:
    """Before anything is written: no file to overwrite (a dangling symlink included: writing
    would create its target, maybe outside the repository), no folder on the way that is a
    file, nothing outside the repository."""
    existing = [path for path in files if path.exists() or path.is_symlink()]
    if existing:
        raise UserError(
            "not overwriting: "
            + ", ".join(p.relative_to(root).as_posix() for p in existing)
            + " (move them away, or edit them)"
        )
    for path in files:
        blocking = next(
            (p for p in reversed(path.parents) if p.is_relative_to(root) and p.exists() and not p.is_dir()),
            None,
        )
        if blocking is not None:
            raise UserError(
                f"{_relative(blocking, root)} is a file, where rag-ci init would make a folder for "
                f"{path.relative_to(root).as_posix()}: move it away, or use --no-workflows"
            )
        if not _inside(path.parent, root):
            raise UserError(
                f"{path.relative_to(root).as_posix()}: its folder leads outside {root} (a symlink): "
                "rag-ci init writes nothing outside the repository"
            )


def render_config(corpora: list[Corpus], kind: str, settings: dict[str, str]) -> str:
    lines = [
        "# rag-ci configuration (docs/configuration.md). Paths are relative to this file.",
        f"questions: {QUESTIONS_FILE}",
        "corpora:                      # the routing table: one entry per corpus",
    ]
    for corpus in corpora:
        # Quoted: a folder named `null`, `true` or `1` is a corpus of that name, not None, True or 1.
        lines.append(
            f"  {json.dumps(corpus.name)}: {{description: {json.dumps(corpus.name + ' documents')}, "
            f"path: {json.dumps(corpus.path)}}}   # {corpus.documents} documents"
        )
    text = "\n".join(lines) + "\n" + target_template(kind).block(settings)
    return (
        text
        + """\
metrics:                      # judge-free to start with; DeepEval metrics need a judge (docs/judges.md)
  hit_at_k: {k: 5}
  mrr: {}
  keyword_coverage: {threshold: 0.6}
  refusal: {}
# judge: {provider: anthropic, model: claude-haiku-4-5-20251001}
# writer: {provider: openai, model: gpt-4.1-mini-2025-04-14}   # drafts questions (`rag-ci questions generate`)
"""
    )


def valid_config(text: str) -> str:
    """`text`, when `rag-ci validate` would take it: init never writes a config it refuses
    (a port outside 1-65535, an entry that is no importable module path, typed at a prompt)."""
    try:
        parse_config(text, "rag-ci.yml")
    except ValidationError as exc:
        raise UserError(f"not writing rag-ci.yml, which `rag-ci validate` would refuse: {exc}") from None
    return text


def write_missing_workflows(root: Path) -> None:
    """`init` in a project that has rag-ci.yml: the workflows it lacks, the others kept."""
    files = users_workflows(root)
    missing = {path: text for path, text in files.items() if not path.exists()}
    kept = [_relative(path, root) for path in files if path not in missing]
    if not missing:
        raise UserError(
            "not overwriting: "
            + ", ".join(kept)
            + " (every workflow exists; move one away to have it rewritten)"
        )
    for path, text in missing.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        echo(f"wrote {_relative(path, root)}")
    if kept:
        echo("kept " + ", ".join(kept) + " (exist)")
    echo(f"the baseline workflow runs on pushes to {default_branch(root)}")


def _ask_target(root: Path, kind: str | None, yes: bool) -> tuple[str, dict[str, str]]:
    detected = detect_target(root)
    guessed = kind or detected.kind
    defaults = {**default_settings(detected.port), **detected_settings(detected)}
    if yes:
        return guessed, defaults
    try:
        chosen = kind or click.prompt(kinds_question(), type=click.Choice(KINDS), default=guessed)
        settings = dict(defaults)
        for key, text, _default in target_template(chosen).asks:
            settings[key] = click.prompt(text, default=defaults[key])
    except click.Abort:
        if sys.stdin.isatty():
            raise
        # stdin ended with questions left (a CI job, a pipe): say what to do, not a bare "Aborted!"
        raise UserError(
            f"no terminal to ask on: `rag-ci init --yes` takes the guesses (target {guessed})"
        ) from None
    return chosen, settings


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--docs",
    "docs",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The folder of documents: each sub-folder is a corpus (default: the first of "
    f"{', '.join(d + '/' for d in DOCUMENT_FOLDERS)} holding documents).",
)
@click.option(
    "--target",
    "kind",
    type=click.Choice(KINDS),
    help="How rag-ci reaches your RAG (default: asked, or guessed "
    "with --yes: docker when there is a Dockerfile, ...).",
)
@click.option("--yes", "-y", is_flag=True, help="Ask nothing: the guesses and defaults.")
@click.option("--no-workflows", is_flag=True, help="Do not write .github/workflows/rag-ci-*.yml.")
@click.option(
    "--workflows",
    "workflows_only",
    is_flag=True,
    help="Write only the workflows that are missing (also what happens when rag-ci.yml exists).",
)
@user_errors
def init(
    folder: Path, docs: Path | None, kind: str | None, yes: bool, no_workflows: bool, workflows_only: bool
) -> None:
    """Start a project: rag-ci.yml (corpora from the document folders, the target), the
    GitHub workflows, and an empty questions.yml for `rag-ci questions generate` to fill.
    Never overwrites a file; with rag-ci.yml already there, writes the missing workflows."""
    root = folder.resolve()
    root.mkdir(parents=True, exist_ok=True)
    if workflows_only or (root / "rag-ci.yml").exists():
        if no_workflows:
            raise UserError(
                "rag-ci.yml exists and --no-workflows: nothing to write"
                if not workflows_only
                else "--workflows and --no-workflows exclude each other"
            )
        write_missing_workflows(root)
        return
    if docs is not None and not docs.resolve().is_relative_to(root):
        raise UserError(
            f"--docs {docs} is outside {root}: corpora live in the repository (rag-ci reads no file outside it)"
        )
    corpora = find_corpora(root, docs.resolve() if docs else None)
    if not corpora:
        where = docs or " or ".join(d + "/" for d in DOCUMENT_FOLDERS)
        raise UserError(
            f"no documents found in {where} (one sub-folder per corpus, e.g. docs/manual-a/, docs/manual-b/): "
            "give the folder with --docs"
        )
    files = {root / "rag-ci.yml": None, root / QUESTIONS_FILE: EMPTY_SET}
    present = rag_ci_workflow(root) if not no_workflows else None
    if present is not None:
        echo(
            f"not writing workflows: {_relative(present, root)} already runs rag-ci (a second pull-request workflow would "
            "run it twice); the shipped ones are in the README"
        )
    elif not no_workflows:
        files.update(users_workflows(root))
    _refuse_unwritable(files, root)
    chosen, settings = _ask_target(root, kind, yes)
    files[root / "rag-ci.yml"] = valid_config(render_config(corpora, chosen, settings))
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text or "", encoding="utf-8")
        echo(f"wrote {_relative(path, root)}")
    echo(
        f"{len(corpora)} corpora: "
        + ", ".join(f"{c.name} ({c.path}, {c.documents} documents)" for c in corpora)
        + f"; target {chosen}"
    )
    if PLACEHOLDER_PATH in (files[root / "rag-ci.yml"] or ""):
        echo(
            f"fill in target.{'path' if chosen == 'docker' else 'url'} in rag-ci.yml: no POST route that answers questions was found in the app's "
            "code (`rag-ci validate` refuses the placeholder until then)"
        )
    echo(
        "next: check the target in rag-ci.yml, then `rag-ci questions generate --writer PROVIDER:MODEL` (or `--writer fake` "
        "for a dry run), review the drafts (`rag-ci questions review`), `rag-ci validate`, `rag-ci run`"
    )
