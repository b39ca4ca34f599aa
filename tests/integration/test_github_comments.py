"""The sticky comment against FakeGitHubServer: one comment, found again, edited in place."""

from __future__ import annotations

import pytest

from rag_ci.github.client import CannotWrite

MARKER = "<!-- rag-ci:comment -->"


def test_first_run_creates_the_comment_and_the_next_edits_it(fake, github):
    url = github.upsert_comment(7, f"{MARKER}\nfirst", MARKER)
    again = github.upsert_comment(7, f"{MARKER}\nsecond", MARKER)
    assert url == again
    [comment] = fake.comments[7]
    assert comment["body"] == f"{MARKER}\nsecond"
    # the token's login is asked once per connection
    assert fake.routes() == [
        "GET /user",
        "GET /repos/acme/rag/issues/{n}/comments",
        "POST /repos/acme/rag/issues/{n}/comments",
        "GET /repos/acme/rag/issues/{n}/comments",
        "PATCH /repos/acme/rag/issues/comments/{n}",
    ]


def test_the_comment_is_found_on_a_later_page(fake, github):
    fake.add_comment(7, f"{MARKER}\nold", login="github-actions[bot]")
    for i in range(150):
        fake.add_comment(7, f"chatter {i}", login="someone")
    fake.comments[7].append(fake.comments[7].pop(0))  # ours is now the last, on page 2

    github.upsert_comment(7, f"{MARKER}\nnew", MARKER)

    assert len(fake.comments[7]) == 151
    assert fake.comments[7][-1]["body"] == f"{MARKER}\nnew"
    assert [r.query.get("page") for r in fake.requests if r.method == "GET" and "comments" in r.path] == [
        None,
        "2",
    ]


def test_a_marked_comment_by_someone_else_is_left_alone(fake, github):
    fake.add_comment(7, f"I quote: {MARKER}", login="reviewer")
    github.upsert_comment(7, f"{MARKER}\nours", MARKER)
    assert [c["body"] for c in fake.comments[7]] == [f"I quote: {MARKER}", f"{MARKER}\nours"]


def test_a_personal_token_is_matched_by_its_own_login(fake, github):
    fake.user_endpoint_forbidden = False
    fake.bot_login = "release-bot"
    fake.add_comment(7, f"{MARKER}\nby the actions bot", login="github-actions[bot]")
    github.upsert_comment(7, f"{MARKER}\nby release-bot", MARKER)
    assert [c["user"]["login"] for c in fake.comments[7]] == ["github-actions[bot]", "release-bot"]
    # The job token's old comment no longer shows a verdict: it says it is stale and links the new one.
    assert (
        fake.comments[7][0]["body"].startswith("<!-- rag-ci:stale -->")
        and fake.comments[7][1]["html_url"] in fake.comments[7][0]["body"]
    )


def test_a_read_only_token_raises_cannot_write(fake, github):
    fake.read_only = True
    with pytest.raises(CannotWrite, match="403 Resource not accessible by integration"):
        github.upsert_comment(7, f"{MARKER}\nx", MARKER)
    assert [r.status for r in fake.requests if r.method == "POST"] == [403]  # not retried


def test_an_old_comment_the_token_may_not_edit_does_not_stop_the_new_one(fake, github):
    fake.comment_only_token = True  # may comment, may not edit another account's comment
    fake.user_endpoint_forbidden, fake.bot_login = False, "release-bot"
    fake.add_comment(7, f"{MARKER}\nold verdict", login="github-actions[bot]")
    url = github.upsert_comment(7, f"{MARKER}\nnew verdict", MARKER)
    assert [c["body"] for c in fake.comments[7]] == [f"{MARKER}\nold verdict", f"{MARKER}\nnew verdict"]
    assert url == fake.comments[7][1]["html_url"]
