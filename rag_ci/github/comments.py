"""The sticky PR comment: one comment per pull request, found again and edited in place.

A comment is ours when it holds the hidden marker *and* was written by the token's user,
so a reviewer who quotes the marker cannot make the action edit their comment.
"""

from __future__ import annotations

from github import Github, GithubException
from github.Repository import Repository

# What the workflow's GITHUB_TOKEN posts as. That token cannot read GET /user (403), so
# its login is known rather than asked.
GITHUB_ACTIONS_LOGIN = "github-actions[bot]"


def token_login(gh: Github) -> str:
    """The login the token posts as: GET /user for a personal token, else the Actions bot."""
    try:
        return gh.get_user().login
    except GithubException as exc:
        if exc.status in (401, 403, 404):
            return GITHUB_ACTIONS_LOGIN
        raise


def upsert_sticky_comment(repo: Repository, pr_number: int, body: str, *, marker: str, me: str) -> str:
    """Edit our marked comment on the PR, or create it; returns the comment's URL.

    Calls: GET issue comments (every page), then PATCH that comment or POST a new one.
    """
    issue = repo.get_issue(pr_number)  # lazy: the issue itself is never fetched
    for comment in issue.get_comments():
        if comment.user is not None and comment.user.login == me and marker in (comment.body or ""):
            comment.edit(body)
            return comment.html_url
    return issue.create_comment(body).html_url
