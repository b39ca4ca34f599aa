"""The GitLab merge-request note (rag_ci.gitlab) against FakeGitLabServer: one note per merge
request, found by its marker and its author, edited in place; someone else's note is never
edited; every page is read; 401/403 say what the token lacks and never show it; 429 waits
Retry-After and retries."""

from __future__ import annotations

import pytest

from fakes.fake_gitlab import FakeGitLabServer
from rag_ci.gitlab.client import GitLabError, GitLabProject
from rag_ci.gitlab.notes import GITLAB_NOTE_LIMIT, NOTE_MARKER, STALE_MARKER, note_body, upsert_note
from rag_ci.safety.secret import Secret

TOKEN = "glpat-Xy7q9ZkLm2Rt5Vw8"


@pytest.fixture
def gitlab():
    with FakeGitLabServer() as server:
        server.bot = server.add_user(TOKEN, "project_42_bot")
        yield server


def project(gitlab: FakeGitLabServer, waits: list[float] | None = None, token: str = TOKEN) -> GitLabProject:
    return GitLabProject(gitlab.url, "42", Secret(token), sleep=(waits if waits is not None else []).append)


def test_the_first_run_posts_one_note_and_the_next_edits_it(gitlab):
    first = upsert_note(project(gitlab), 5, note_body("## rag-ci: ❌ 1 regression"))
    second = upsert_note(project(gitlab), 5, note_body("## rag-ci: ✅ pass"))

    assert first is not None and second is not None and second.id == first.id
    [note] = gitlab.notes[5]
    assert (
        note["body"] == f"{NOTE_MARKER}\n## rag-ci: ✅ pass"
        and note["author"]["username"] == "project_42_bot"
    )
    assert [r.user for r in gitlab.requests] == ["project_42_bot"] * len(gitlab.requests)
    assert gitlab.routes().count("POST /api/v4/projects/{n}/merge_requests/{n}/notes") == 1


def test_a_marked_note_of_someone_else_is_never_edited(gitlab):
    reviewer = gitlab.add_user("reviewer-token-Q2w3E4r5", "reviewer")
    quoted = gitlab.add_note(5, f"{NOTE_MARKER}\nI quote the bot: all green!", author=reviewer)
    gitlab.add_note(5, f"{NOTE_MARKER}\nsystem says", author=gitlab.bot, system=True)

    note = upsert_note(project(gitlab), 5, note_body("## rag-ci: ❌ 1 regression"))

    assert quoted["body"] == f"{NOTE_MARKER}\nI quote the bot: all green!"  # untouched
    assert note is not None and note.id not in (n["id"] for n in gitlab.notes[5][:2])
    assert not any(r.method == "PUT" for r in gitlab.requests)


def test_our_note_is_found_past_the_first_page_and_a_second_one_is_marked_stale(gitlab):
    other = gitlab.add_user("other-token-Z9x8C7v6", "someone")
    ours = gitlab.add_note(5, f"{NOTE_MARKER}\nold", author=gitlab.bot)
    for i in range(150):
        gitlab.add_note(5, f"comment {i}", author=other)
    duplicate = gitlab.add_note(5, f"{NOTE_MARKER}\nraced", author=gitlab.bot)

    note = upsert_note(project(gitlab), 5, note_body("new"))

    assert note is not None and note.id == ours["id"] and ours["body"] == f"{NOTE_MARKER}\nnew"
    assert duplicate["body"].startswith(STALE_MARKER) and f"#note_{ours['id']}" in duplicate["body"]
    pages = [r.query["page"] for r in gitlab.requests if r.method == "GET" and r.path.endswith("/notes")]
    assert pages == ["1", "2"]


def test_without_create_only_an_existing_note_is_edited(gitlab):
    assert upsert_note(project(gitlab), 5, note_body("green"), create=False) is None
    assert gitlab.notes.get(5, []) == []
    gitlab.add_note(5, f"{NOTE_MARKER}\nred", author=gitlab.bot)
    note = upsert_note(project(gitlab), 5, note_body("green"), create=False)
    assert note is not None and gitlab.notes[5][0]["body"] == f"{NOTE_MARKER}\ngreen"


def test_a_refused_token_is_a_clear_error_that_never_shows_it(gitlab):
    with pytest.raises(GitLabError) as refused:
        upsert_note(project(gitlab, token="glpat-Wrong0Token1Value"), 5, note_body("x"))
    assert "HTTP 401" in str(refused.value) and "the token was refused" in str(refused.value)
    assert "glpat-Wrong0Token1Value" not in str(refused.value)

    gitlab.inject("POST", r"/notes$", 403)
    with pytest.raises(GitLabError, match=r"HTTP 403 .*needs the `api` scope and at least the Reporter role"):
        upsert_note(project(gitlab), 5, note_body("x"))
    assert TOKEN not in repr(project(gitlab).__dict__)


def test_rate_limits_are_waited_out_as_retry_after_says(gitlab):
    gitlab.inject("GET", r"/notes$", 429, times=2, headers={"Retry-After": "7"})
    waits: list[float] = []
    note = upsert_note(project(gitlab, waits), 5, note_body("x"))
    assert note is not None and waits == [7.0, 7.0]

    gitlab.inject("PUT", r"/notes/\d+$", 429, times=4, headers={"Retry-After": "3600"})
    waits.clear()
    with pytest.raises(GitLabError, match="still rate-limited after 3 retries"):
        upsert_note(project(gitlab, waits), 5, note_body("y"))
    assert waits == [60.0, 60.0, 60.0]  # capped


def test_the_note_stays_within_gitlabs_limit():
    body = note_body("x" * (GITLAB_NOTE_LIMIT + 10))
    assert len(body) == GITLAB_NOTE_LIMIT and body.startswith(NOTE_MARKER) and "truncated" in body[-200:]


def test_a_project_path_is_sent_url_encoded(gitlab):
    GitLabProject(gitlab.url, "group/rag", Secret(TOKEN)).create_note(5, "hello")
    assert gitlab.requests[-1].path == "/api/v4/projects/group%2Frag/merge_requests/5/notes"


def test_a_redirect_is_refused_so_the_token_never_follows_it(gitlab):
    with FakeGitLabServer() as elsewhere:
        elsewhere.add_user(TOKEN, "thief")
        gitlab.inject("GET", r"/user$", 302, headers={"Location": f"{elsewhere.url}/user"})
        with pytest.raises(GitLabError, match="HTTP 302"):
            upsert_note(project(gitlab), 5, note_body("x"))
        assert elsewhere.requests == []
