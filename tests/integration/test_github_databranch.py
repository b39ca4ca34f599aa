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
        "GET /repos/acme/rag/contents/{path}", "GET /repos/acme/rag/branches/{branch}",
        "POST /repos/acme/rag/git/trees", "POST /repos/acme/rag/git/commits", "POST /repos/acme/rag/git/refs",
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
