"""The sticky PR comment: one comment per pull request, found again and edited in place.

A comment is ours when the hidden marker *opens* its body and the token's account wrote it,
so a reviewer (or a dependency bot) quoting the marker cannot make the action edit their
comment. Only one comment may show a verdict: any other comment of the action's accounts
that opens with the marker (a second one, or the one an earlier token posted before the
workflow switched tokens) is edited to say it is stale, so no old "pass" stays standing.
When the token's account cannot be asked (GET /user failed), the comment is posted as a new
one, whose author GitHub reports: that is the account, and its older comments go stale.
"""

from __future__ import annotations

import re

from github import GithubException
from github.IssueComment import IssueComment
from github.Repository import Repository

from rag_ci.github.identity import GITHUB_ACTIONS_LOGIN, Identity

__all__ = [
    "COMMENT_MARKER",
    "GITHUB_ACTIONS_LOGIN",
    "STALE_MARKER",
    "comment_body",
    "stale_body",
    "untrusted_comment_body",
    "upsert_sticky_comment",
]

# Hidden in every body we post: how the action finds its own comment again.
COMMENT_MARKER = "<!-- rag-ci:comment -->"
STALE_MARKER = (
    "<!-- rag-ci:stale -->"  # a stale comment no longer opens with COMMENT_MARKER: never ours again
)
GITHUB_COMMENT_LIMIT = 65536
TRUNCATION_NOTE = (
    "\n\n_…comment truncated to GitHub's 65,536-character limit; the step summary has the full report._\n"
)


def comment_body(markdown: str) -> str:
    """The sticky comment: hidden marker first, then the report, within GitHub's limit."""
    body = f"{COMMENT_MARKER}\n{markdown}"
    if len(body) > GITHUB_COMMENT_LIMIT:
        body = body[: GITHUB_COMMENT_LIMIT - len(TRUNCATION_NOTE)] + TRUNCATION_NOTE
    return body


def untrusted_comment_body(text: str, origin: str) -> str:
    """A comment body read from a PR run's artifact, made safe to post with a write token.

    In the fork-PR pattern the artifact comes from a run of the fork's code, so its text
    is the fork's to choose. Post it only when it is ours in shape (starts with the
    marker), cut to the limit, with every @mention neutralised (a zero-width space after
    `@` stops GitHub from notifying anyone), and never as the bot's own verdict: a banner
    first says whose run produced it (`origin`, built from the event GitHub wrote), and its
    headline says it is the fork run's.
    """
    if not text.startswith(COMMENT_MARKER):
        raise ValueError("the comment artifact does not start with the rag-ci marker; not posting it")
    text = re.sub(r"@(?=[A-Za-z0-9_-])", "@\u200b", text)
    report = text[len(COMMENT_MARKER) :].lstrip("\n")
    report = re.sub(r"\A## rag-ci:", "## rag-ci (as the fork's run reported it):", report)
    banner = (
        f"> [!IMPORTANT]\n> **Produced by the fork's own run ({origin}), not by this repository's rag-ci.** "
        "The text below is that run's saved comment, posted as it was: untrusted, it may say anything. "
        "The pull request's check is the verdict; re-run rag-ci from this repository to confirm it.\n\n"
    )
    return comment_body(banner + report)


def stale_body(current_url: str) -> str:
    return (
        f"{STALE_MARKER}\n_This rag-ci comment is stale: it showed the result of an earlier run. "
        f"The current report is [here]({current_url})._\n"
    )


def upsert_sticky_comment(
    repo: Repository,
    pr_number: int,
    body: str,
    *,
    marker: str,
    me: Identity | None,
    writers: frozenset[str] = frozenset(),
    create: bool = True,
) -> str:
    """Edit our marked comment on the PR, or create it; every other marked comment of the action's
    accounts (`writers`, or `me`'s own) is edited to say it is stale. Returns the comment's URL.

    Ours: the marker opens it and `me` wrote it; with an installation token whose App is not named,
    failing that, the first marked comment of a bot account (rag_ci.github.identity). `me` None
    (the identity lookup failed): a new comment is posted and its author is `me`.
    `create` False (the `comment` input said this run needs none): only an existing comment of ours is
    edited, so an earlier verdict never stays standing; "" when there is none.
    Calls: GET issue comments (every page), then PATCH that comment or POST a new one, one PATCH per stale one."""
    issue = repo.get_issue(pr_number)  # lazy: the issue itself is never fetched
    marked = [c for c in issue.get_comments() if c.user is not None and (c.body or "").startswith(marker)]
    current: IssueComment | None = None
    if me is not None:
        current = next((c for c in marked if me.wrote(c.user.login, c.user.type)), None) or next(
            (c for c in marked if me.may_have_written(c.user.login, c.user.type)), None
        )
    if current is None and not create:  # without `me`: the action's accounts' comment is ours
        current = next((c for c in marked if me is None and c.user.login in writers), None)
        if current is None:
            return ""
    if current is not None:
        current.edit(body)
    else:
        current = issue.create_comment(body)
        if me is None:  # GitHub says who posted it: the token's account
            me = Identity(current.user.login, "the comment it posted")
    ours = {*([me.login] if me is not None else []), *writers}
    for stale in marked:
        if stale.id != current.id and stale.user.login in ours:
            _retire(stale, current.html_url)
    return current.html_url


def _retire(stale: IssueComment, current_url: str) -> None:
    """Edit an older comment to say it is stale. A token that may not edit it (it may only comment)
    leaves it as it is: the new comment is posted all the same, and it is the newest."""
    try:
        stale.edit(stale_body(current_url))
    except GithubException as exc:
        if exc.status not in (403, 404):
            raise
