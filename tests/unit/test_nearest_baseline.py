"""The order in which baseline candidates are tried: nearest first, then the branch's own, then an
artifact before a copy, then the newest; a candidate off the history is never tried."""

from __future__ import annotations

from datetime import UTC, datetime

from rag_ci.action.nearest_baseline import Candidate, ranked
from rag_ci.github.baseline_copies import BaselineCopy


def at(day: int) -> datetime:
    return datetime(2025, 1, day, tzinfo=UTC)


def copy_of(sha: str, day: int) -> Candidate:
    return Candidate(
        sha, "main", at(day), copy=BaselineCopy(f"baselines/{sha}.json.gz", sha, at(day), "x", 1)
    )


def test_the_nearest_commit_wins_whatever_its_age():
    near, far = Candidate("n" * 40, "main", at(1)), Candidate("f" * 40, "main", at(9))
    assert ranked([far, near], {"n" * 40: 1, "f" * 40: 4}, "main") == [near, far]


def test_at_the_same_commit_the_branchs_own_then_an_artifact_then_the_newest():
    mains = Candidate("c" * 40, "main", at(5))
    release_old, release_new = (
        Candidate("c" * 40, "release/1.x", at(1)),
        Candidate("c" * 40, "release/1.x", at(2)),
    )
    copy = copy_of("c" * 40, 9)
    order = ranked([copy, mains, release_old, release_new], {"c" * 40: 0}, "release/1.x")
    assert order == [release_new, release_old, mains, copy]


def test_a_candidate_off_the_history_is_never_tried():
    tag = Candidate("9" * 40, "main", at(9))  # a tag called main, on a commit main never had
    assert ranked([tag], {"a" * 40: 0}, "main") == []
