"""`rag-ci publish`: the report where a CI's users already look, beyond the job log.

`rag-ci publish gitlab RESULTS --baseline BASE` keeps one sticky note on a GitLab merge
request (rag_ci.gitlab.notes): the same markdown as the GitHub comment, posted or edited in
place, under the same `comment` choice as the action (rag_ci.core.reporting.comment_when).
GitLab CI's predefined variables are the defaults; the token is read from a CI/CD variable
(RAG_CI_GITLAB_TOKEN unless --token-variable names another) and never printed. docs/other-ci.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import user_errors
from rag_ci.core.reporting.comment_when import COMMENT_WHEN, posts_new_comment
from rag_ci.errors import RagCiError

TOKEN_VARIABLE = "RAG_CI_GITLAB_TOKEN"
PUBLISH_EXIT_CODES = """\b
Exit codes:
  0  the note was posted or edited, or the --comment choice needed none
  2  it could not be: bad input, an unreadable results file, GitLab refused
     or did not answer (the message says which call and what the token lacks)
"""


@click.group()
def publish() -> None:
    """Publish the report beyond the job log: a GitLab merge-request note."""


@publish.command("gitlab", epilog=PUBLISH_EXIT_CODES)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--baseline", type=click.Path(path_type=Path), help="The baseline results.json it was compared with."
)
@click.option(
    "--accepted",
    "accepted_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --baseline: the accepted file (docs/accepted.md), as the run applied it.",
)
@click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="An eval_history.jsonl: the note shows the trend of its last 10 runs.",
)
@click.option(
    "--comment",
    "when",
    type=click.Choice(COMMENT_WHEN),
    default="always",
    show_default=True,
    help="When to post a new note: always | on-change | on-failure | never. A note already there is "
    "always edited, so an earlier red never stays.",
)
@click.option(
    "--api-url",
    envvar="CI_API_V4_URL",
    show_envvar=True,
    help="GitLab's API, e.g. https://gitlab.com/api/v4.",
)
@click.option(
    "--project", envvar="CI_PROJECT_ID", show_envvar=True, help="The project's id or path (group/name)."
)
@click.option(
    "--merge-request",
    type=click.IntRange(1),
    envvar="CI_MERGE_REQUEST_IID",
    show_envvar=True,
    help="The merge request's IID.",
)
@click.option(
    "--token-variable",
    default=TOKEN_VARIABLE,
    show_default=True,
    help="The environment variable holding the project or group access token (`api` scope); its value is never printed.",
)
@user_errors
def gitlab(
    results: Path,
    baseline: Path | None,
    accepted_file: Path | None,
    history_file: Path | None,
    when: str,
    api_url: str | None,
    project: str | None,
    merge_request: int | None,
    token_variable: str,
) -> None:
    """Post or edit the one rag-ci note on a GitLab merge request (RESULTS compared with --baseline)."""
    from rag_ci.gitlab.client import GitLabProject
    from rag_ci.gitlab.notes import note_body, upsert_note
    from rag_ci.safety.secret import Secret

    missing = [
        f"{option} (or {variable})"
        for option, variable, value in (
            ("--api-url", "CI_API_V4_URL", api_url),
            ("--project", "CI_PROJECT_ID", project),
            ("--merge-request", "CI_MERGE_REQUEST_IID", merge_request),
        )
        if not value
    ]
    if missing:
        raise RagCiError(
            "publish gitlab: no "
            + ", no ".join(missing)
            + ": run it in a merge-request pipeline, or give them"
        )
    assert api_url and project and merge_request
    markdown, create = _note_markdown(results, baseline, accepted_file, history_file, when)
    token = Secret(os.environ.get(token_variable, "").strip())
    if not token:
        raise RagCiError(
            f"publish gitlab: the variable {token_variable} is not set: give it a project or group access token "
            "(scope `api`, role Reporter or above) as a masked CI/CD variable"
        )
    note = upsert_note(
        GitLabProject(api_url, project, token), merge_request, note_body(markdown), create=create
    )
    if note is None:
        echo(
            f"[rag-ci] no note on !{merge_request}: --comment {when} needs none, and there is none to update",
            err=True,
        )
        return
    where = os.environ.get("CI_PROJECT_URL", "").rstrip("/")
    url = f"{where}/-/merge_requests/{merge_request}#note_{note.id}" if where else f"note {note.id}"
    echo(f"[rag-ci] merge-request note: {url}", err=True)


def _note_markdown(
    results: Path, baseline: Path | None, accepted_file: Path | None, history_file: Path | None, when: str
) -> tuple[str, bool]:
    """The report's markdown for the note, and whether `when` lets this run post a new note."""
    from rag_ci.core.reporting.render import Commits, render_markdown
    from rag_ci.files.accepted_file import read_accepted
    from rag_ci.files.results_file import load_results
    from rag_ci.gate import History, Verdict, compare_runs
    from rag_ci.gitlab.notes import GITLAB_NOTE_LIMIT

    head = load_results(results)
    base = load_results(baseline, what="baseline") if baseline else None
    accepted = read_accepted(accepted_file, required=True) if accepted_file and base else ()
    history = History.of_text(history_file.read_text(encoding="utf-8")) if history_file else History()
    outcome = compare_runs(base, head, accepted=accepted, history=history)
    comparison = None if outcome.verdict in (Verdict.BROKEN, Verdict.INCOMPATIBLE) else outcome.comparison
    markdown = render_markdown(
        outcome.head,
        comparison,
        notice=outcome.notice,
        links=_links(),
        trend=history.trend(),
        calibration=list(outcome.calibration),
        commits=Commits.of_runs(base, head),
        measured=outcome.measured,
        max_chars=GITLAB_NOTE_LIMIT - 1000,  # room for the marker and a truncation note
    )
    failed = outcome.exit_code != 0 or outcome.gate_off
    return markdown, posts_new_comment(when, failed=failed, comparison=comparison)


def _links() -> dict[str, str]:
    """The pipeline and the job's artifacts (the HTML report), from GitLab CI's variables."""
    links = {}
    if pipeline := os.environ.get("CI_PIPELINE_URL"):
        links["pipeline"] = pipeline
    if job := os.environ.get("CI_JOB_URL"):
        links["job artifacts (HTML report)"] = f"{job}/artifacts/browse"
    return links
