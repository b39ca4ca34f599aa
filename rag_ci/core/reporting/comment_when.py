"""When the sticky comment (a GitHub pull request's, a GitLab merge request's note) is posted:
the `comment` input of the action and `--comment` of `rag-ci publish`.

    always       every run posts or edits it (the default)
    on-change    only when something regressed, got worse, leaked, gained or changed
                 (an edited, new, removed or accepted question, a budget breached)
    on-failure   only when the gate fails, or would if it were on
    never        no new comment

Whatever the choice, a comment of ours that is already there is edited with this run's
report, so an earlier push's red never stays standing; nothing is ever deleted. The check
run, the job summary and the report files are always written (docs/action.md).
"""

from __future__ import annotations

from rag_ci.core.comparison.compare import Comparison

COMMENT_WHEN = ("always", "on-change", "on-failure", "never")


def comment_when(value: str, name: str = "comment") -> str:
    """The choice as given (any case, spaces around), or ValueError naming the four."""
    choice = value.strip().lower() or "always"
    if choice not in COMMENT_WHEN:
        raise ValueError(f"{name}: expected one of {', '.join(COMMENT_WHEN)}, got {value!r}")
    return choice


def something_changed(comparison: Comparison | None) -> bool:
    """Anything the comment would report as a change from the baseline."""
    if comparison is None:
        return False
    return bool(
        comparison.gating
        or comparison.gains
        or comparison.changed
        or comparison.new
        or comparison.removed
        or comparison.accepted
        or comparison.budget_breaches
    )


def posts_new_comment(choice: str, *, failed: bool, comparison: Comparison | None) -> bool:
    """Whether this run may post a comment where there is none yet (`failed`: the gate fails, or
    gating rows were found while the gate is off; a run that could not evaluate has failed)."""
    if choice == "always":
        return True
    if choice == "on-failure":
        return failed
    if choice == "on-change":
        return failed or something_changed(comparison)
    return False
