"""Who the action's token is: the account its comments and data-branch commits are made by.

Three kinds of token reach the action, and each says who it is differently:

    the job's GITHUB_TOKEN      GET /user is 403; it acts as `github-actions[bot]`
    a personal access token     GET /user answers the user's login
    a GitHub App's token        GET /user is 403 too, and `GET /app` needs the App's JWT, which
                                the job never has: it acts as `<app slug>[bot]`, a name the
                                workflow knows (actions/create-github-app-token's `app-slug`
                                output) and gives as the `comment-author` input

So the login is, in order: the `comment-author` input; `github-actions[bot]` when action.yml
says the token *is* the job's token (it compares them, so no token is handed over twice);
GET /user. An installation token that is not the job's and was not named is an App's whose
name is not known: then a marked comment by any bot account (never a person's: a reviewer
quoting the marker cannot make the action edit their comment) is taken as ours.
"""

from __future__ import annotations

import dataclasses

from github import Github, GithubException

# What the workflow's GITHUB_TOKEN posts and commits as.
GITHUB_ACTIONS_LOGIN = "github-actions[bot]"


@dataclasses.dataclass(frozen=True)
class Identity:
    """The account the token acts as. `login` None: an App's installation token not named."""

    login: str | None
    how: str  # how it was found, for the log: "comment-author input", "GET /user", ...

    @property
    def any_bot(self) -> bool:
        return self.login is None

    def wrote(self, login: str | None, account_type: str | None) -> bool:
        """Whether a comment by `login` (a User or a Bot account) is this token's."""
        if login is None:
            return False
        if self.login is not None:
            return login == self.login
        return account_type == "Bot" and login.endswith("[bot]")

    def writers(self) -> frozenset[str]:
        """Accounts whose verified commits on the data branch count as the action's: this token's,
        and the job token's (the workflows on the default branch write with it by default)."""
        return frozenset({GITHUB_ACTIONS_LOGIN} | ({self.login} if self.login else set()))


def token_identity(gh: Github, *, named: str | None, is_job_token: bool | None) -> Identity:
    """The token's identity (calls: GET /user, only when neither input tells)."""
    if named:
        return Identity(named, "the comment-author input")
    if is_job_token:
        return Identity(GITHUB_ACTIONS_LOGIN, "the job's GITHUB_TOKEN")
    try:
        return Identity(gh.get_user().login, "GET /user (a personal token)")
    except GithubException as exc:
        if exc.status not in (401, 403, 404):
            raise
    if is_job_token is False:  # an installation token, not the job's: a GitHub App's, name unknown
        return Identity(None, "an installation token that is not the job's (a GitHub App's): any bot account")
    return Identity(GITHUB_ACTIONS_LOGIN, "an installation token (GET /user 403): the job's GITHUB_TOKEN")
