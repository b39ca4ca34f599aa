"""End to end: without a baseline, a pull request cannot choose where the judge key goes.

With a baseline the judge is pinned to the one it recorded. Without one (the first PR, an
expired artifact) the PR's own rag-ci.yml used to set `judge.base_url`, and the judge key was
sent as `Authorization: Bearer` to the PR author's server. Now the judge comes from the base
branch's rag-ci.yml (read at the PR's base commit through the contents API), or, when there is
none, the judge does not run and the key goes nowhere; the comment says which."""

from __future__ import annotations

import json

import pytest
from action_harness import BASE_SHA, judged_project, pull_request_event, run_action

from fakes.fake_github import FakeGitHubServer
from fakes.judge_servers import FakeOpenAIJudgeServer

pytestmark = pytest.mark.slow
KEY = "sk-proj-judgekey0123456789ABCDEFabcdef"


def pr_run(tmp_path, fake, token, judge_url):
    workspace = judged_project(tmp_path / "workspace", judge_url)
    return workspace, run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        inputs={"openai-api-key": KEY},
        env={"INPUT_OPENAI-API-KEY": KEY},
        timeout=180,
    )


def test_without_a_baseline_the_judge_key_goes_to_the_base_branchs_judge_not_the_prs(tmp_path, token):
    with (
        FakeOpenAIJudgeServer() as trusted,
        FakeOpenAIJudgeServer() as attacker,
        FakeGitHubServer(token=token) as fake,
    ):
        base = judged_project(tmp_path / "base", trusted.base_url)
        fake.add_files_at(BASE_SHA, {"rag-ci.yml": (base / "rag-ci.yml").read_text()})
        _, run = pr_run(tmp_path, fake, token, attacker.base_url)

        assert run.returncode == 0, run.log  # bootstrap
        assert attacker.requests == 0 and attacker.presented_keys == set()
        assert trusted.requests > 0 and trusted.presented_keys == {KEY}
        [comment] = fake.comments[7]
        assert "The judge is the base branch's (rag-ci.yml at main (bbbbbbbbbbbb))" in comment["body"]
        assert f"judge.base_url {trusted.base_url} → {attacker.base_url}" in comment["body"].replace("`", "")
        assert "GET /repos/acme/rag/contents/{path}" in fake.routes()
        [read] = [r for r in fake.requests if r.path.endswith("/contents/rag-ci.yml")]
        assert read.query["ref"] == BASE_SHA


def test_without_a_baseline_nor_a_config_on_the_base_branch_the_judge_key_is_withheld_and_the_run_says_why(
    tmp_path, token
):
    with FakeOpenAIJudgeServer() as attacker, FakeGitHubServer(token=token) as fake:
        workspace, run = pr_run(tmp_path, fake, token, attacker.base_url)

        assert run.returncode == 0, run.log
        assert attacker.requests == 0 and attacker.presented_keys == set()
        [comment] = fake.comments[7]
        for text in (comment["body"], run.summary, run.log):
            assert (
                "The judge did not run and no judge key was used: the base branch has no rag-ci.yml" in text
            )
        meta = json.loads((workspace / "rag-ci-output" / "results.json").read_text())["meta"]
        assert meta["judge"] is None  # judge-free metrics only
