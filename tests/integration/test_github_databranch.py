"""eval_history.jsonl on the rag-ci-data branch, through the contents API of FakeGitHubServer."""

from __future__ import annotations

import pytest

from rag_ci.github.client import CannotWrite

BRANCH, FILE = "rag-ci-data", "eval_history.jsonl"


def test_first_append_creates_an_orphan_data_branch(fake, github):
    github.append_data_line(BRANCH, FILE, '{"n": 1}', message="rag-ci: history")
    assert fake.branches[BRANCH][FILE] == b'{"n": 1}\n'
    assert set(fake.branches[BRANCH]) == {FILE, "README.md"}  # nothing from main
    assert fake.routes() == [
        "GET /repos/acme/rag/contents/{path}",
        "GET /repos/acme/rag/branches/{branch}",
        "POST /repos/acme/rag/git/trees",
        "POST /repos/acme/rag/git/commits",
        "POST /repos/acme/rag/git/refs",
    ]
    commit = next(r for r in fake.requests if r.path.endswith("/git/commits"))
    assert commit.body["parents"] == []


def test_later_appends_read_then_write_the_file(fake, github):
    fake.branches[BRANCH] = {FILE: b'{"n": 1}'}  # no trailing newline: still one line each
    github.append_data_line(BRANCH, FILE, '{"n": 2}', message="m")
    assert fake.branches[BRANCH][FILE] == b'{"n": 1}\n{"n": 2}\n'
    assert fake.routes() == ["GET /repos/acme/rag/contents/{path}", "PUT /repos/acme/rag/contents/{path}"]


def test_a_missing_file_on_an_existing_branch_is_created(fake, github):
    fake.branches[BRANCH] = {"README.md": b"x"}
    github.append_data_line(BRANCH, FILE, "{}", message="m")
    assert fake.branches[BRANCH][FILE] == b"{}\n"


def test_a_concurrent_append_is_retried_not_lost(fake, github):
    fake.branches[BRANCH] = {FILE: b"1\n"}
    fake.inject("PUT", f"/repos/acme/rag/contents/{FILE}", 409, "eval_history.jsonl does not match")
    github.append_data_line(BRANCH, FILE, "2", message="m")
    assert fake.branches[BRANCH][FILE] == b"1\n2\n"
    assert [r.status for r in fake.requests if r.method == "PUT"] == [409, 200]


def test_files_over_the_contents_api_limit_are_read_through_the_blob_api(fake, github):
    fake.contents_inline_limit = 10
    fake.branches[BRANCH] = {FILE: b'{"a": "long line"}\n'}
    assert github.read_data_file(BRANCH, FILE) == '{"a": "long line"}\n'
    assert "GET /repos/acme/rag/git/blobs/{sha}" in fake.routes()


def test_reading_a_missing_branch_gives_none(github):
    assert github.read_data_file(BRANCH, FILE) is None


def test_without_contents_write_the_append_raises_cannot_write(fake, github):
    fake.branches[BRANCH] = {FILE: b"1\n"}
    fake.read_only = True
    with pytest.raises(CannotWrite, match="contents: write"):
        github.append_data_line(BRANCH, FILE, "2", message="m")


# --- Who wrote a history line ------------------------------------------------
def test_only_lines_the_action_committed_itself_are_vouched_for(fake, github):
    github.append_data_line(BRANCH, FILE, '{"run": 1}', message="rag-ci: history")  # creates the branch
    github.append_data_line(BRANCH, FILE, '{"run": 2}', message="rag-ci: history")
    text = fake.branches[BRANCH][FILE].decode() + '{"forged": 3}\n'
    fake.push_commit(BRANCH, FILE, text, login="mallory")
    # the bot's e-mail, unsigned
    fake.push_commit(BRANCH, FILE, text + '{"forged": 4}\n', login="github-actions[bot]", verified=False)
    fake.requests.clear()

    vouched = github.lines_written_by_us(
        BRANCH, FILE, {'{"run": 1}', '{"run": 2}', '{"forged": 3}', '{"forged": 4}', '{"absent": 5}'}
    )

    assert vouched == {'{"run": 1}', '{"run": 2}'}
    # the token's login, the commits list, then each commit until every line is attributed
    assert fake.routes().count("GET /repos/acme/rag/commits/{sha}") == 4


def test_a_later_copy_of_a_genuine_line_makes_it_untrusted(fake, github):
    github.append_data_line(BRANCH, FILE, '{"flaky": {"Q": [1, 4]}}', message="rag-ci: history")
    genuine = fake.branches[BRANCH][FILE].decode()
    fake.push_commit(BRANCH, FILE, genuine * 3, login="mallory")  # the mark, copied twice more

    assert github.lines_written_by_us(BRANCH, FILE, {'{"flaky": {"Q": [1, 4]}}'}) == set()
