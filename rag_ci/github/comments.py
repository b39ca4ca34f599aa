"""The sticky PR comment: one comment per pull request, found again and edited in place.

A comment is ours when it holds the hidden marker *and* was written by the token's user,
so a reviewer who quotes the marker cannot make the action edit their comment.
"""

from __future__ import annotations

import re

from github.Repository import Repository

from rag_ci.github.identity import GITHUB_ACTIONS_LOGIN, Identity

__all__ = ["COMMENT_MARKER", "GITHUB_ACTIONS_LOGIN", "comment_body", "untrusted_comment_body", "upsert_sticky_comment"]

# Hidden in every body we post: how the action finds its own comment again.
COMMENT_MARKER = "<!-- rag-ci:comment -->"
GITHUB_COMMENT_LIMIT = 65536
TRUNCATION_NOTE = "\n\n_…comment truncated to GitHub's 65,536-character limit; the step summary has the full report._\n"


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
    report = text[len(COMMENT_MARKER):].lstrip("\n")
    report = re.sub(r"\A## rag-ci:", "## rag-ci (as the fork's run reported it):", report)
    banner = (f"> [!IMPORTANT]\n> **Produced by the fork's own run ({origin}), not by this repository's rag-ci.** "
              "The text below is that run's saved comment, posted as it was: untrusted, it may say anything. "
              "The pull request's check is the verdict; re-run rag-ci from this repository to confirm it.\n\n")
    return comment_body(banner + report)


def upsert_sticky_comment(repo: Repository, pr_number: int, body: str, *, marker: str, me: Identity) -> str:
    """Edit our marked comment on the PR, or create it; returns the comment's URL.

    Ours: it holds the marker and `me` wrote it; with an installation token whose App is not
    named, failing that, the first marked comment of a bot account (rag_ci.github.identity).
    Calls: GET issue comments (every page), then PATCH that comment or POST a new one.
    """
    issue = repo.get_issue(pr_number)  # lazy: the issue itself is never fetched
    mine = maybe = None
    for comment in issue.get_comments():
        user = comment.user
        if user is None or marker not in (comment.body or ""):
            continue
        if me.wrote(user.login, user.type):
            mine = comment
            break
        if maybe is None and me.may_have_written(user.login, user.type):
            maybe = comment
    if (found := mine or maybe) is not None:
        found.edit(body)
        return found.html_url
    return issue.create_comment(body).html_url
