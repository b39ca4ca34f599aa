"""Who the action's token is: the account its comments and data-branch commits are made by.

Three kinds of token reach the action, and each says who it is differently:

    the job's GITHUB_TOKEN      GET /user is 403; it acts as `github-actions[bot]`
    a personal access token     GET /user answers the user's login
    a GitHub App's token        GET /user is 403 too, and `GET /app` needs the App's JWT, which
                                the job never has: it acts as `<app slug>[bot]`, a name the
                                workflow knows (actions/create-github-app-token's `app-slug`
                                output) and can give as the `comment-author` input

So the login is the `comment-author` input, else GET /user's answer. An installation token
(403) is GITHUB_TOKEN or an App's, which the action cannot tell apart: its comment is the
marked one of `github-actions[bot]`, else the first marked one of another bot account. Never
a person's: a reviewer who quotes the marker cannot make the action edit their comment.
"""

from __future__ import annotations

import dataclasses

from github import Github, GithubException

# What the workflow's GITHUB_TOKEN posts and commits as.
GITHUB_ACTIONS_LOGIN = "github-actions[bot]"


@dataclasses.dataclass(frozen=True)
class Identity:
    """The account the token acts as; `any_bot`: or, failing that, any bot account (an installation token)."""

    login: str
    how: str  # how it was found, for the log
    any_bot: bool = False

    def wrote(self, login: str | None, account_type: str | None) -> bool:
        """Whether a comment by `login` (a User or a Bot account) is this token's for certain."""
        return login is not None and login == self.login

    def may_have_written(self, login: str | None, account_type: str | None) -> bool:
        """Whether a comment by `login` may be this token's: its own, or (an installation token) a bot's."""
        return self.wrote(login, account_type) or (
            self.any_bot and login is not None and account_type == "Bot" and login.endswith("[bot]")
        )

    def writers(self) -> frozenset[str]:
        """Accounts whose verified commits on the data branch count as the action's: this token's,
        and the job token's (the workflows on the default branch write with it by default)."""
        return frozenset({GITHUB_ACTIONS_LOGIN, self.login})


def token_identity(gh: Github, *, named: str | None) -> Identity:
    """The token's identity (calls: GET /user, unless the workflow named it)."""
    if named:
        return Identity(named, "the comment-author input")
    try:
        return Identity(gh.get_user().login, "GET /user")
    except GithubException as exc:
        if exc.status not in (401, 403, 404):
            raise
    return Identity(
        GITHUB_ACTIONS_LOGIN,
        "an installation token (GET /user is 403): GITHUB_TOKEN or a GitHub App's",
        any_bot=True,
    )
