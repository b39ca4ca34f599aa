"""Pull-request look-ups: the merge-base, and the PR behind a workflow_run."""

from __future__ import annotations

from github.Repository import Repository


def merge_base(repo: Repository, base: str, head: str) -> str | None:
    """The commit the PR branched from (calls: GET compare/{base}...{head})."""
    commit = repo.compare(base, head).merge_base_commit
    return commit.sha if commit is not None else None


def open_pr_for_head(repo: Repository, owner: str, branch: str, head_sha: str | None) -> int | None:
    """The open PR whose head is `owner:branch` (and, when given, at `head_sha`).

    A workflow_run payload lists no pull requests when the PR comes from a fork, so the
    PR is found from the run's head, which GitHub (not the fork) wrote into the payload.
    Calls: GET pulls?head=owner:branch&state=open.
    """
    for pr in repo.get_pulls(state="open", head=f"{owner}:{branch}", sort="updated", direction="desc"):
        if head_sha is None or pr.head.sha == head_sha:
            return pr.number
    return None
