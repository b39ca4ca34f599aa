"""Settings.from_environ: every input and runner variable, read in one place."""

from __future__ import annotations

import json
import pickle
from pathlib import Path, PurePosixPath

import pytest

from rag_ci.action.settings import Secret, Settings
from rag_ci.errors import RagCiError


def event_file(tmp_path: Path, payload: dict) -> str:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return str(path)


def test_defaults_when_only_the_runner_variables_are_set():
    s = Settings.from_environ({"GITHUB_REPOSITORY": "acme/rag"})
    assert s.config == PurePosixPath("rag-ci.yml")
    assert s.mode == "auto" and s.fail_on_regression is True and s.rebaseline is False
    assert s.baseline_artifact == "rag-ci-baseline" and s.data_branch == "rag-ci-data"
    assert s.api_url == "https://api.github.com"
    assert not s.github_token and s.judge_keys == {}


def test_inputs_are_read_from_the_variables_action_yml_maps():
    s = Settings.from_environ(
        {
            "RAG_CI_CONFIG": "eval/rag-ci.yml",
            "RAG_CI_MODE": "Full",
            "RAG_CI_REBASELINE": "true",
            "RAG_CI_FAIL_ON_REGRESSION": "false",
            "RAG_CI_BASELINE_ARTIFACT": "my-baseline",
            "RAG_CI_WORKING_DIRECTORY": "services/rag",
            "RAG_CI_GITHUB_TOKEN": "tok",
            "RAG_CI_ANTHROPIC_API_KEY": "sk-ant",
            "RAG_CI_OPENAI_API_KEY": "",
            "GITHUB_API_URL": "https://ghe.example/api/v3/",
            "GITHUB_WORKSPACE": "/github/workspace",
        }
    )
    assert s.mode == "full" and s.rebaseline and not s.fail_on_regression
    assert s.config_path == Path("/github/workspace/services/rag/eval/rag-ci.yml")
    assert s.api_url == "https://ghe.example/api/v3"  # Enterprise Server: whatever the runner says
    assert s.github_token.reveal() == "tok"
    assert {k: v.reveal() for k, v in s.judge_keys.items()} == {"ANTHROPIC_API_KEY": "sk-ant"}


@pytest.mark.parametrize(
    "name,value",
    [
        ("RAG_CI_MODE", "sometimes"),
        ("RAG_CI_REBASELINE", "maybe"),
        ("RAG_CI_CONFIG", "../../etc/passwd"),
        ("RAG_CI_WORKING_DIRECTORY", "/abs"),
    ],
)
def test_invalid_inputs_are_refused_with_the_input_named(name, value):
    with pytest.raises(RagCiError) as err:
        Settings.from_environ({name: value})
    assert name.removeprefix("RAG_CI_").lower().replace("_", "-").split("-")[0] in str(err.value)


def test_a_secret_never_shows_its_value():
    secret = Secret("ghs_supersecret")
    settings = Settings(github_token=secret, judge_keys={"OPENAI_API_KEY": Secret("sk-live")})
    for text in (str(secret), repr(secret), f"{secret}", repr(settings), str(settings)):
        assert "supersecret" not in text and "sk-live" not in text
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    assert settings.secrets() == [secret, Secret("sk-live")]


def test_pull_request_facts_come_from_the_event_payload(tmp_path):
    payload = {
        "pull_request": {
            "number": 7,
            "head": {"sha": "h" * 40, "repo": {"full_name": "fork/rag"}},
            "base": {"ref": "develop"},
        },
        "repository": {"default_branch": "main"},
    }
    s = Settings.from_environ(
        {
            "GITHUB_EVENT_PATH": event_file(tmp_path, payload),
            "GITHUB_REPOSITORY": "acme/rag",
            "GITHUB_EVENT_NAME": "pull_request",
        }
    )
    assert (s.pr_number, s.pr_base_ref, s.pr_head_sha) == (7, "develop", "h" * 40)
    assert s.pr_is_from_fork


def test_push_to_the_default_branch_is_recognised(tmp_path):
    payload = {"ref": "refs/heads/main", "before": "a" * 40, "repository": {"default_branch": "main"}}
    s = Settings.from_environ(
        {
            "GITHUB_EVENT_PATH": event_file(tmp_path, payload),
            "GITHUB_REF": "refs/heads/main",
            "GITHUB_EVENT_NAME": "push",
        }
    )
    assert s.on_default_branch and s.push_before_sha == "a" * 40
    new_branch = Settings.from_environ(
        {
            "GITHUB_EVENT_PATH": event_file(tmp_path, {**payload, "before": "0" * 40}),
            "GITHUB_REF": "refs/heads/main",
        }
    )
    assert new_branch.push_before_sha is None  # a branch's first push has no previous tip


def test_a_scheduled_run_counts_as_the_default_branch_even_without_repository_in_the_payload(tmp_path):
    s = Settings.from_environ(
        {
            "GITHUB_EVENT_PATH": event_file(tmp_path, {"schedule": "17 4 * * 1"}),
            "GITHUB_REF": "refs/heads/trunk",
            "GITHUB_EVENT_NAME": "schedule",
        }
    )
    assert s.default_branch == "trunk" and s.on_default_branch


def test_run_url_and_workspace_relative_paths():
    s = Settings.from_environ(
        {
            "GITHUB_SERVER_URL": "https://ghe.example",
            "GITHUB_REPOSITORY": "acme/rag",
            "GITHUB_RUN_ID": "99",
            "GITHUB_RUN_ATTEMPT": "2",
            "GITHUB_WORKSPACE": "/github/workspace",
        }
    )
    assert s.run_url == "https://ghe.example/acme/rag/actions/runs/99/attempts/2"
    assert s.relative_to_workspace(s.output_path / "results.json") == "rag-ci-output/results.json"


def test_an_unreadable_event_payload_is_a_clear_error(tmp_path):
    with pytest.raises(RagCiError, match="GITHUB_EVENT_PATH"):
        Settings.from_environ({"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})


def test_the_runners_channels_are_read_even_when_the_inputs_are_invalid(tmp_path):
    environ = {
        "RAG_CI_MODE": "bogus",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
        "GITHUB_ACTIONS": "true",
    }
    with pytest.raises(RagCiError, match="input mode"):
        Settings.from_environ(environ)
    only = Settings.runner_only(environ)  # enough to report the invalid input where the user looks
    assert (only.step_summary, only.github_output, only.in_actions) == (
        tmp_path / "summary.md",
        tmp_path / "out.txt",
        True,
    )
    valid = Settings.from_environ({**environ, "RAG_CI_MODE": "pr"})
    assert (valid.step_summary, valid.github_output, valid.in_actions) == (
        only.step_summary,
        only.github_output,
        True,
    )


def test_a_merge_group_event_names_the_queues_base_and_the_pull_request_it_gates(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(
        '{"merge_group": {"head_sha": "'
        + "9" * 40
        + '", "head_ref": "refs/heads/gh-readonly-queue/main/pr-42-'
        + "8" * 40
        + '", "base_sha": "'
        + "8" * 40
        + '", "base_ref": "refs/heads/main"}}'
    )
    s = Settings.from_environ({"GITHUB_EVENT_NAME": "merge_group", "GITHUB_EVENT_PATH": str(event)})
    assert (s.pr_base_ref, s.pr_base_sha, s.pr_number, s.gated_pr_number) == ("main", "8" * 40, None, 42)


def test_comment_author_is_a_github_login():
    assert (
        Settings.from_environ({"RAG_CI_COMMENT_AUTHOR": " acme-rag-ci[bot] "}).comment_author
        == "acme-rag-ci[bot]"
    )
    assert Settings.from_environ({}).comment_author is None
    with pytest.raises(RagCiError, match="input comment-author"):
        Settings.from_environ({"RAG_CI_COMMENT_AUTHOR": "@acme bot"})


def test_action_yml_lists_every_verdict_the_action_can_set():
    from ruamel.yaml import YAML

    from rag_ci.gate import Verdict

    action = YAML(typ="safe").load((Path(__file__).parents[2] / "action.yml").read_text())
    listed = set(action["outputs"]["verdict"]["description"].split("(")[0].replace("|", " ").split())
    assert listed == {v.value for v in Verdict} | {"error", "interrupted"}
    assert action["name"] != "rag-ci"  # another project's action on the Marketplace
