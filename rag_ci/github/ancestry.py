"""Which commits lie behind a commit: how far back a baseline's commit is, and whether it is on the branch.

GitHub's list of commits from a commit (`GET commits?sha=`) is its history, newest first: one
call gives the position of up to 100 ancestors, which tells at once which baseline candidate is the
nearest ancestor of a pull request's merge base and how many commits lie between. A commit
not in that history is not on the branch, whatever branch name its run reported (a tag called
`main` reports `main`).
"""

from __future__ import annotations

from collections.abc import Collection

from github.Repository import Repository

MAX_ANCESTORS = 300  # how far back a baseline is looked for (3 calls at most)


def distances(
    repo: Repository, tip: str, wanted: Collection[str], *, limit: int = MAX_ANCESTORS
) -> dict[str, int]:
    """How many commits lie between `tip` (a commit or a branch) and each of `wanted` that is
    `tip` or one of its ancestors (0: `tip` itself); the others are left out.

    Calls: GET commits?sha={tip}, one per 100 commits, stopping once every wanted commit is placed
    (usually one call)."""
    pending = set(wanted)
    found: dict[str, int] = {}
    if not pending:
        return found
    for index, commit in enumerate(repo.get_commits(sha=tip)):
        if commit.sha in pending:
            found[commit.sha] = index
            pending.discard(commit.sha)
        if not pending or index + 1 >= limit:  # before the next item, which may be the next page's call
            break
    return found
