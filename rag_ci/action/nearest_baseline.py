"""The nearest trusted ancestor: which baseline a run is compared with (docs/action.md, "Which baseline").

A run's baseline is the trusted baseline whose commit is the nearest ancestor of the commit it
is compared from (a pull request's merge base, a merge queue's base, the commit a push replaced,
the commit a full run evaluates): on the branch itself, or, where that branch has none, on the
default branch it was cut from. So a pull request into `release/1.x` without a baseline of its own
is compared with main's baseline at the commit the branch was cut from, never passed as a first run.

Candidates, in order of distance (then the branch's own before the default branch's, an artifact
before a copy, the newest first):

- a `rag-ci-baseline` artifact a run of this repository uploaded on either branch;
- a copy on the data branch, for the default branch only (rag-ci writes copies there only).

A candidate counts only when its commit is in the history behind the commit compared from
(rag_ci.github.ancestry: on the branch, whatever branch name its run reported) and its run, read
from the Actions API, is a successful push / dispatch / schedule run of a baseline workflow
(`baseline-workflows`) in this repository on that branch at that commit (a copy: also written by a
verified commit of the action's account when its name says, rag_ci.github.baseline_copies).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from rag_ci.github.artifacts import ArtifactRef, usable
from rag_ci.github.baseline_copies import BaselineCopy
from rag_ci.github.client import GitHubRepo

ARTIFACT, DATA_BRANCH = "artifact", "data branch"
VETTED = 6  # candidates vetted (a run read each; a copy also its commit) before giving up


@dataclasses.dataclass(frozen=True)
class Candidate:
    """An artifact or a copy that may be the baseline, before it is vetted."""

    sha: str
    branch: str
    made_at: datetime | None
    artifact: ArtifactRef | None = None
    copy: BaselineCopy | None = None

    @property
    def source(self) -> str:
        return ARTIFACT if self.artifact is not None else DATA_BRANCH

    @property
    def run_id(self) -> int | None:
        return self.artifact.run_id if self.artifact is not None else self.copy.run_id if self.copy else None

    @property
    def named(self) -> str:
        """How a message names it: `rag-ci-baseline` artifact #12 of main (commit 1a2b3c4d5e6f)."""
        if self.artifact is not None:
            return f"the `{self.artifact.name}` artifact #{self.artifact.id} of {self.branch} (commit {self.sha[:12]})"
        return f"the copy `{self.copy.path if self.copy else '?'}`"


def artifact_candidates(listed: list[ArtifactRef], branches: Sequence[str]) -> list[Candidate]:
    return [
        Candidate(a.head_sha, a.head_branch or "", a.created_at, artifact=a)
        for a in usable(listed, branches)
        if a.head_sha
    ]


def copy_candidates(copies: list[BaselineCopy], default_branch: str) -> list[Candidate]:
    return [Candidate(c.commit, default_branch, c.stored_at, copy=c) for c in copies]


def ranked(candidates: list[Candidate], distance: dict[str, int], branch: str) -> list[Candidate]:
    """The candidates on the history, nearest first; then the branch's own, an artifact, the newest."""

    def age(c: Candidate) -> float:  # newest first: the larger the timestamp, the smaller the key
        made = c.made_at or datetime.min.replace(tzinfo=UTC)
        return -(made if made.tzinfo else made.replace(tzinfo=UTC)).timestamp()

    on_history = [c for c in candidates if c.sha in distance]
    return sorted(on_history, key=lambda c: (distance[c.sha], c.branch != branch, c.copy is not None, age(c)))


@dataclasses.dataclass
class Search:
    """One look for the nearest trusted ancestor: the candidates, their distances, what was refused."""

    github: GitHubRepo
    branch: str  # the branch compared with (a pull request's base)
    default_branch: str
    tip_of: Callable[[], str | None]  # the commit compared from (asked once, only when needed)
    refused: list[str] = dataclasses.field(default_factory=list)  # "<candidate>: <why>", for the report
    off_history: list[Candidate] = dataclasses.field(default_factory=list)  # trusted names, other commits
    _tip: list[str | None] = dataclasses.field(default_factory=list)

    @property
    def branches(self) -> tuple[str, ...]:
        return (self.branch,) if self.branch == self.default_branch else (self.branch, self.default_branch)

    def tip(self) -> str | None:
        if not self._tip:
            self._tip.append(self.tip_of())
        return self._tip[0]

    def nearest(
        self, candidates: list[Candidate], vet: Callable[[Candidate], str | None], skip: set[int]
    ) -> tuple[Candidate, int] | None:
        """The nearest candidate on the history behind the tip that `vet` finds nothing wrong with
        (None: none), with how many commits lie between. `skip`: ids of candidates vetted already.
        Calls: the history (one call per 100 commits, usually one), and what `vet` asks."""
        tip = self.tip() or self.branch  # no commit known (a first push): the branch's tip
        distance = self.github.ancestor_distances(tip, {c.sha for c in candidates})
        self.off_history.extend(c for c in candidates if c.sha not in distance)
        tried = 0
        for candidate in ranked(candidates, distance, self.branch):
            if id(candidate) in skip:
                continue
            if tried >= VETTED:
                break
            tried += 1
            problem = vet(candidate)
            if problem is None:
                return candidate, distance[candidate.sha]
            self.refused.append(f"{candidate.named}: {problem}")
        return None
