"""The code's commit graph, as FakeGitHubServer serves it: what GitHub answers about ancestry.

Two endpoints read it, with GitHub's shapes and rules:

- `GET /repos/{o}/{r}/commits?sha={sha or branch}`: the commits reachable from `sha`, newest
  first (git log's order; on a history without merges, the chain of parents), paginated;
  an unknown sha or branch is 404 "No commit found for SHA: …" (FakeGitHubServer).
- `GET /repos/{o}/{r}/compare/{base}...{head}`: `merge_base_commit`, `status` (`identical`,
  `ahead`, `behind`, `diverged`), `ahead_by` and `behind_by` counted on the graph.

A test lays out history with `commit(sha, parent)` (a branch's tip follows with `tip`), or a
straight line with `line(*shas)`, oldest first.
"""

from __future__ import annotations

from typing import Any


class CommitGraph:
    def __init__(self) -> None:
        self.parents: dict[str, list[str]] = {}
        self.tips: dict[str, str] = {}  # code branch -> its newest commit

    def commit(self, sha: str, *parents: str, branch: str | None = None) -> str:
        self.parents[sha] = list(parents)
        for parent in parents:
            self.parents.setdefault(parent, [])
        if branch is not None:
            self.tips[branch] = sha
        return sha

    def line(self, *shas: str, branch: str | None = None) -> None:
        """`shas` one after the other, oldest first (the first one's parents kept when known)."""
        previous: str | None = None
        for sha in shas:
            if previous is None:
                self.parents.setdefault(sha, [])
            else:
                self.commit(sha, previous)
            previous = sha
        if branch is not None and previous is not None:
            self.tips[branch] = previous

    def knows(self, ref: str) -> bool:
        return ref in self.parents or ref in self.tips

    def resolve(self, ref: str) -> str | None:
        if ref in self.tips:
            return self.tips[ref]
        return ref if ref in self.parents else None

    def history(self, ref: str) -> list[str]:
        """`ref` and its ancestors, newest first (first parents before the others)."""
        start = self.resolve(ref)
        if start is None:
            return []
        seen: list[str] = []
        stack = [start]
        while stack:
            sha = stack.pop(0)
            if sha in seen:
                continue
            seen.append(sha)
            stack.extend(self.parents.get(sha, []))
        return seen

    def compare(self, base: str, head: str) -> dict[str, Any] | None:
        """GitHub's comparison of `base...head` on the graph; None when either is unknown."""
        base_sha, head_sha = self.resolve(base), self.resolve(head)
        if base_sha is None or head_sha is None:
            return None
        of_base, of_head = self.history(base_sha), self.history(head_sha)
        merge_base = next((sha for sha in of_head if sha in set(of_base)), None)
        if merge_base is None:
            return None  # no common history: GitHub answers 404 for unrelated histories
        ahead = [sha for sha in of_head if sha not in set(self.history(merge_base))]
        behind = [sha for sha in of_base if sha not in set(self.history(merge_base))]
        status = (
            "identical"
            if not ahead and not behind
            else "ahead"
            if not behind
            else "behind"
            if not ahead
            else "diverged"
        )
        return {
            "status": status,
            "ahead_by": len(ahead),
            "behind_by": len(behind),
            "total_commits": len(ahead),
            "merge_base": merge_base,
        }
