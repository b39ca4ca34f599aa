"""The pull request's sticky comment, from an evaluating run or a run that stopped before it
could evaluate: posted (or edited) in place, or saved for the fork-safe `comment` mode to post
when the token cannot write (rag_ci.action.comment_mode)."""

from __future__ import annotations

from rag_ci.action.modes import PLANS, resolve_mode
from rag_ci.action.outputs import COMMENT_FILE
from rag_ci.action.settings import Settings
from rag_ci.core.reporting.comment_when import posts_new_comment
from rag_ci.core.reporting.render import Commits, render_not_evaluated
from rag_ci.errors import RagCiError
from rag_ci.github.client import CannotWrite, GitHubError, GitHubRepo
from rag_ci.github.comments import COMMENT_MARKER, comment_body
from rag_ci.github.workflow import Runner


def replace_comment_with_not_evaluated(
    settings: Settings, github: GitHubRepo, runner: Runner, cause: str
) -> None:
    """A run that stopped before it could evaluate replaces the PR comment with "⛔ not evaluated —
    <cause>" and a link to the run, so the comment never shows the previous push's verdict."""
    try:
        mode = resolve_mode(settings)
    except RagCiError:
        return
    if mode is None or not PLANS[mode].comment or settings.pr_number is None:
        return
    commits = Commits(head_sha=settings.pr_head_sha or settings.sha, head_url=settings.run_url)
    post_or_save_comment(
        settings,
        github,
        runner,
        comment_body(render_not_evaluated(cause, run_url=settings.run_url, commits=commits)),
        create=posts_new_comment(settings.comment, failed=True, comparison=None),
    )


def post_or_save_comment(
    settings: Settings, github: GitHubRepo, runner: Runner, body: str, *, create: bool = True
) -> str:
    """Post (or edit) the sticky comment; when the token cannot, save it for the fork-safe
    workflow_run to post (docs/action.md). Returns the comment's URL, or "" when saved.
    `create` False (the `comment` input): only a comment already there is edited."""
    s = settings
    assert s.pr_number is not None
    try:
        url = github.upsert_comment(s.pr_number, body, COMMENT_MARKER, create=create)
        runner.info(f"[rag-ci] comment: {url or f'none posted (comment: {s.comment}), none to update'}")
        return url
    except GitHubError as exc:
        path = s.output_path / COMMENT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        why = (
            "the token is read-only (a pull request from a fork?)"
            if isinstance(exc, CannotWrite)
            else str(exc)
        )
        runner.warning(
            f"Could not comment on the pull request: {why}. The report is in the step summary, and the comment "
            f"was saved to {s.relative_to_workspace(path)}: upload it as the `{s.comment_artifact}` artifact and "
            "post it from a workflow_run workflow (docs/action.md, 'Pull requests from forks').",
            title="rag-ci: comment not posted",
        )
        return ""
