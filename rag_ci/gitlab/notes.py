"""The sticky merge-request note: one note per merge request, found again and edited in place.

The same ownership rules as the GitHub comment (rag_ci.github.comments): a note is ours when
the hidden marker *opens* its body and the token's user wrote it (GitLab says who: GET /user,
and each note's author id). A reviewer quoting the marker, or another bot's note, is never
edited. Any further marked note of the same user (two jobs that raced) is edited to say it is
stale, so only one verdict stands. Nothing is deleted.
"""

from __future__ import annotations

from rag_ci.gitlab.client import GitLabProject, Note

NOTE_MARKER = "<!-- rag-ci:comment -->"  # the GitHub comment's marker: one report, one marker
STALE_MARKER = "<!-- rag-ci:stale -->"
GITLAB_NOTE_LIMIT = 1_000_000  # characters of a note's body (GitLab's limit)
TRUNCATION_NOTE = (
    "\n\n_…note truncated to GitLab's 1,000,000-character limit; the job's artifacts have the full report._\n"
)


def note_body(markdown: str) -> str:
    """The note: hidden marker first, then the report, within GitLab's limit."""
    body = f"{NOTE_MARKER}\n{markdown}"
    if len(body) > GITLAB_NOTE_LIMIT:
        body = body[: GITLAB_NOTE_LIMIT - len(TRUNCATION_NOTE)] + TRUNCATION_NOTE
    return body


def stale_body(current_id: int) -> str:
    return (
        f"{STALE_MARKER}\n_This rag-ci note is stale: it showed the result of an earlier job. "
        f"The current report is [here](#note_{current_id})._\n"
    )


def upsert_note(project: GitLabProject, merge_request: int, body: str, *, create: bool = True) -> Note | None:
    """Edit our marked note on the merge request, or create it (only when `create`: the `comment`
    choice may say this run needs none, and then an existing note is still brought up to date).
    Returns the note, or None when there was none and none was created.
    Calls: GET /user, GET notes (every page), then PUT that note or POST a new one, one PUT per stale one."""
    me = project.user_id()
    ours = [
        n
        for n in project.notes(merge_request)
        if not n.system and n.author_id == me and n.body.startswith(NOTE_MARKER)
    ]
    if ours:
        current = project.update_note(merge_request, ours[0].id, body)
    elif create:
        current = project.create_note(merge_request, body)
    else:
        return None
    for stale in ours[1:]:
        project.update_note(merge_request, stale.id, stale_body(current.id))
    return current
