"""Annotations of an action run, where GitHub shows them: the first `SHOWN` (most severe first)
as workflow commands on the step's log, and every one in the `rag-ci gate` check run when the
token may create one (pull requests; `permissions: checks: write`).

What each annotation says and where it points is rag_ci.core.reporting.annotations (pure);
this module finds the places on disk (the question set's lines, the cited documents' files,
paths relative to the workspace) and writes them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rag_ci.action.settings import Settings
from rag_ci.core.questionset.question_lines import question_lines
from rag_ci.core.reporting.annotations import (
    Annotation,
    by_severity,
    comparison_annotations,
    validation_annotations,
)
from rag_ci.core.results import RunResult
from rag_ci.files.project import Project
from rag_ci.gate import Comparison
from rag_ci.github.checks import CHECK_RUN_NAME, annotation_json
from rag_ci.github.client import CannotWrite, GitHubError, GitHubRepo
from rag_ci.github.workflow import Runner

SHOWN = 10  # GitHub shows 10 annotations of each level per step; the check run holds them all
_COMMANDS = {"failure": "error", "warning": "warning", "notice": "notice"}


def workspace_path(settings: Settings, path: str | Path) -> str:
    """`path` relative to the workspace (the repository root annotations are relative to)."""
    absolute = Path(path).resolve()
    try:
        return absolute.relative_to(settings.workspace.resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


def for_comparison(
    settings: Settings,
    project: Project,
    comparison: Comparison,
    *,
    params: dict | None = None,
    gate_on: bool = True,
    github: GitHubRepo | None = None,
    comment_url: str | None = None,
) -> list[Annotation]:
    """Every question that fails the gate at its `- id:` line, every changed cited document at its
    first changed line (read at the baseline's commit through `github`), else at the document."""
    source = Path(project.questions.source)
    try:
        lines = question_lines(source.read_text(encoding="utf-8"), str(source))
    except (OSError, UnicodeDecodeError):
        lines = {}
    documents = _document_paths(settings, project, comparison)
    changed_at = (
        _changed_lines(settings, github, documents, comparison.base_sha) if github is not None else {}
    )
    return comparison_annotations(
        comparison,
        questions_path=workspace_path(settings, source),
        lines=lines,
        documents=documents,
        params=params,
        level="failure" if gate_on else "warning",
        document_lines=changed_at,
        comment_url=comment_url or None,
    )


CHANGED_LINES_READ = 20  # documents read at the baseline's commit for their changed line (one REST call each)


def _changed_lines(
    settings: Settings, github: GitHubRepo, documents: dict[str, str], base_sha: str | None
) -> dict[str, int]:
    """Changed cited source -> the first line of its document that differs from the baseline's
    commit (GitHub shows an annotation at line 1 of an unchanged line as outside the diff)."""
    import difflib

    out: dict[str, int] = {}
    if not base_sha:
        return out
    for source, path in list(documents.items())[:CHANGED_LINES_READ]:
        try:
            before = github.file_at(base_sha, path)
            now = (settings.workspace / path).read_text(encoding="utf-8")
        except (GitHubError, OSError, UnicodeDecodeError):
            continue
        if before is None:
            continue
        old, new = before.splitlines(), now.splitlines()
        first = next(
            (
                j1
                for tag, _, _, j1, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
                if tag != "equal"
            ),
            None,
        )
        if first is not None:
            out[source] = min(first, max(len(new) - 1, 0)) + 1
    return out


def _document_paths(settings: Settings, project: Project, comparison: Comparison) -> dict[str, str]:
    """Changed cited source -> its document's path relative to the workspace (one document: a
    source naming several, or none any more, is annotated at its question instead)."""
    sources = {
        s
        for c in (
            *comparison.regressions,
            *comparison.worse,
            *comparison.leaks,
            *comparison.gains,
            *comparison.changed,
            *comparison.carried,
            *comparison.source_changed_failing,
            *(a.change for a in comparison.accepted),
        )
        for s in c.source_changed
    }
    if not sources:
        return {}
    from rag_ci.errors import RagCiError
    from rag_ci.files.corpus_files import corpus_folders, read_corpora

    try:
        folders = corpus_folders(project.root, project.corpora)
        index = read_corpora(folders, content=False).index
    except RagCiError:
        return {}
    out = {}
    for source in sources:
        found = index.cited(source)
        if len(found) == 1:
            out[source] = workspace_path(settings, folders[found[0].corpus] / found[0].path)
    return out


def for_problems(settings: Settings, problems: Sequence[str]) -> list[Annotation]:
    """A ValidationError's problems at their files and lines."""
    return validation_annotations(problems, lambda path: workspace_path(settings, path))


def show(
    runner: Runner, annotations: Sequence[Annotation], where_the_rest_are: str = "the job summary"
) -> None:
    """The first SHOWN annotations, most severe first, as workflow commands; a plain line counts the rest."""
    ordered = by_severity(annotations)
    for a in ordered[:SHOWN]:
        runner.annotate(_COMMANDS[a.level], a.message, title=a.title, file=a.path, line=a.line)
    if len(ordered) > SHOWN:
        runner.info(f"[rag-ci] {len(ordered) - SHOWN} more annotation(s) in {where_the_rest_are}")


def publish(
    settings: Settings,
    github: GitHubRepo,
    runner: Runner,
    annotations: Sequence[Annotation],
    *,
    conclusion: str,
    title: str,
    summary: str,
) -> bool:
    """The annotations on the log and, on a pull request or a merge queue's commit, in the `rag-ci gate`
    check run. Returns whether the check run was created; a token without `checks: write` is one quiet line."""
    head_sha = settings.check_sha
    if head_sha is None or settings.pr_is_from_fork:  # a fork's token is read-only: no call to be refused
        show(runner, annotations)
        return False
    # What goes over REST is redacted like everything the runner writes (the Runner's own filter).
    redact = runner.redact
    located = [
        annotation_json(a.level, redact(a.title), redact(a.message), a.path, a.line)
        for a in by_severity(annotations)
        if a.path and a.line
    ]
    try:
        url = github.publish_check_run(
            head_sha=head_sha,
            conclusion=conclusion,
            title=redact(title),
            summary=redact(summary + whole_file_findings(annotations)),
            annotations=located,
            details_url=settings.run_url or None,
        )
    except CannotWrite:
        show(runner, annotations)
        runner.info(
            f"[rag-ci] no check run: the token lacks checks: write (add `checks: write` to the job's permissions "
            f"for the '{CHECK_RUN_NAME}' check with every annotation)"
        )
        return False
    except GitHubError as exc:
        show(runner, annotations)
        runner.warning(f"the '{CHECK_RUN_NAME}' check run was not created: {exc}", title="rag-ci: check run")
        return False
    show(runner, annotations, where_the_rest_are=f"the '{CHECK_RUN_NAME}' check run and the job summary")
    runner.info(f"[rag-ci] check run: {url}")
    return True


def whole_file_findings(annotations: Sequence[Annotation]) -> str:
    """The findings about a file without a line (a changed document whose changed line is not
    known, a config problem without one), for the check run's summary: the Checks API places every
    annotation on a line, and line 1 of a changed document is outside the pull request's diff."""
    from rag_ci.core.reporting.escaping import code_span, escape_md

    whole = [a for a in by_severity(annotations) if a.path and not a.line]
    if not whole:
        return ""
    return "\n\nAbout whole files:\n\n" + "\n".join(
        f"- {code_span(a.path or '', in_table=False)}: {escape_md(a.message, 600)}" for a in whole
    )


def conclusion_of(exit_code: int, *, gate_off: bool = False) -> str:
    """The check run's conclusion: the step's own outcome (the gate off with findings: neutral)."""
    if exit_code != 0:
        return "failure"
    return "neutral" if gate_off else "success"


def check_text(
    head: RunResult,
    comparison: Comparison | None,
    annotations: Sequence[Annotation],
    run_url: str | None,
    *,
    files_of: str = "the pull request's files",
    made_baseline: bool = False,
) -> tuple[str, str]:
    """The check run's title and summary: the comment's headline (what fails: leaks, regressions,
    budgets), each breached budget, what the annotations are; the report is in the job summary."""
    from rag_ci.core.reporting.alerts import budget_limit
    from rag_ci.core.reporting.render import escape_md, fmt_budget, verdict_headline

    headline = verdict_headline(head, comparison, made_baseline=made_baseline)[1]

    where = f"[the job summary]({run_url})" if run_url else "the job summary"
    if comparison is None:
        why = "this run is the new baseline" if made_baseline else escape_md(headline)
        return f"rag-ci: {headline}", f"Nothing was compared: {why}. The report is in {where}."
    lines = [f"**{escape_md(headline)}**", ""]
    lines += [
        f"- budget {escape_md(b.name, 60)}: {fmt_budget(b.value, b.unit)}, allowed {fmt_budget(b.allowed, b.unit)} "
        f"(limit {escape_md(budget_limit(b), 40)})"
        for b in comparison.budget_breaches
    ]
    if comparison.budget_breaches:
        lines.append("")
    if annotations:
        lines.append(
            f"{len(annotations)} annotation(s) on {files_of}: each question that fails the gate "
            "at its `- id:` line, each changed cited document at its first changed line."
        )
        lines.append("")
    lines.append(f"The full report is in {where}.")
    return f"rag-ci: {headline}", "\n".join(lines)
