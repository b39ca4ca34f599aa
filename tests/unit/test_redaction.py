"""The redaction boundary and the target's least-privilege environment."""

from __future__ import annotations

import os

import pytest

from rag_ci.action.entry import _prepare_process_environment
from rag_ci.action.settings import Settings
from rag_ci.core.config import parse_config
from rag_ci.errors import ValidationError
from rag_ci.safety.redaction import Redactor
from rag_ci.targets.processes import passed_env, process_env, target_env

KEY = "sk-proj-3fA9xQ2LmN7pR4tV8wY1zB6cD0eG5hJ"


def test_a_secret_is_masked_whole_and_when_cut_after_its_first_twelve_characters():
    redact = Redactor([KEY])
    assert redact(f"key={KEY}.") == "key=***."
    assert redact(f"malformed: '{KEY[:20]}'") == "malformed: '***'"
    assert redact(KEY[:11]) == KEY[:11]  # too little of it to be recognised


def test_a_secret_split_across_a_stderr_line_boundary_is_masked_in_both_halves():
    redact = Redactor([KEY])
    tail = f"starting\n{KEY[:9]}\n{KEY[9:]} done"
    assert KEY[9:] not in redact(tail) and KEY[:9] not in redact(tail)
    quoted = repr(f"{KEY[:20]}\n{KEY[20:]}")  # a tail quoted with repr() in an error message
    assert KEY[20:] not in redact(quoted)


def test_streamed_lines_are_redacted_with_the_next_line_in_view():
    lines = Redactor([KEY]).lines()
    shown = [
        *lines.feed("first"),
        *lines.feed(KEY[:10]),
        *lines.feed(KEY[10:] + " rest"),
        *lines.feed("last"),
        *lines.flush(),
    ]
    assert shown == ["first", "***", "*** rest", "last"]
    assert not any(KEY[:6] in line or KEY[-6:] in line for line in shown)


def test_a_reply_is_redacted_in_every_string_including_context_texts():
    reply = {
        "answer": f"a {KEY}",
        "contexts": [{"text": f"ctx {KEY}", "doc_id": "a", "metadata": {KEY: [KEY]}}],
    }
    clean = Redactor([KEY]).tree(reply)
    assert KEY not in repr(clean) and clean["contexts"][0]["text"] == "ctx ***"


def test_short_values_and_ordinary_words_under_secret_names_are_left_alone():
    redactor = Redactor.from_environment(
        {
            "PIP_KEYRING_PROVIDER": "disabled",
            "TOKENIZERS_PARALLELISM": "false",
            "SSH_KEY_PATH": "/home/me/.ssh/id",
            "MY_SERVICE_TOKEN": "tok_4Fq9ZkLm2",
            "GITHUB_TOKEN": "ghs_abcdefgh1234",
            "PLAIN": "ghp_notasecretname1",
        }
    )
    text = "disabled false /home/me/.ssh/id tok_4Fq9ZkLm2 ghs_abcdefgh1234 ghp_notasecretname1"
    assert redactor(text) == "disabled false /home/me/.ssh/id *** *** ghp_notasecretname1"
    assert "tok_" not in repr(redactor)


def test_the_target_environment_is_an_allow_list():
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "HTTPS_PROXY": "http://proxy:3128",
        "SSL_CERT_FILE": "/etc/ca.pem",
        "CI": "true",
        "GITHUB_REPOSITORY": "acme/rag",
        "GITHUB_SHA": "1" * 40,
        "GITHUB_TOKEN": "ghs_x",
        "GITHUB_ENV": "/runner/env",
        "GITHUB_OUTPUT": "/runner/out",
        "OPENAI_API_KEY": "sk-judge",
        "ANTHROPIC_API_KEY": "sk-ant",
        "INPUT_OPENAI-API-KEY": "sk-judge",
        "INPUT_GITHUB-TOKEN": "ghs_x",
        "RAG_CI_GITHUB_TOKEN": "ghs_x",
        "ACTIONS_RUNTIME_TOKEN": "rt",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "SOME_APP_SETTING": "x",
    }
    env = process_env({"EXTRA": "1"}, environ)
    assert {
        "HOME",
        "LANG",
        "LC_ALL",
        "HTTPS_PROXY",
        "SSL_CERT_FILE",
        "CI",
        "GITHUB_REPOSITORY",
        "GITHUB_SHA",
        "EXTRA",
    } <= set(env)
    for name in (
        "GITHUB_TOKEN",
        "GITHUB_ENV",
        "GITHUB_OUTPUT",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "INPUT_OPENAI-API-KEY",
        "INPUT_GITHUB-TOKEN",
        "RAG_CI_GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "SOME_APP_SETTING",
    ):
        assert name not in env, name


def test_pass_env_passes_named_variables_and_wildcards_never_match_protected_ones():
    environ = {
        "MYRAG_URL": "u",
        "MYRAG_API_KEY": "k",
        "OPENAI_API_KEY": "sk",
        "INPUT_X": "i",
        "RAG_CI_Y": "r",
        "GITHUB_TOKEN": "t",
    }
    assert passed_env(["MYRAG_*", "*"], environ) == {"MYRAG_URL": "u", "MYRAG_API_KEY": "k"}
    assert passed_env(["OPENAI_API_KEY", "MISSING"], environ) == {"OPENAI_API_KEY": "sk"}


def test_target_env_and_secret_marking_from_rag_ci_yml(tmp_path):
    config = parse_config(
        "target:\n  kind: command\n  command: [rag]\n  pass_env: [RAG_OPENAI_KEY, DB_URL]\n"
        "  secret_env: [DB_URL]\n  env: {MODE: fast, UPSTREAM_KEY: '${UPSTREAM}'}\n",
        "rag-ci.yml",
    )
    environ = {
        "RAG_OPENAI_KEY": "sk-rag",
        "DB_URL": "postgres://u:pw@db/x",
        "UPSTREAM": "up-123",
        "OTHER": "o",
    }
    assert target_env(config.target, environ) == {
        "RAG_OPENAI_KEY": "sk-rag",
        "DB_URL": "postgres://u:pw@db/x",
        "MODE": "fast",
        "UPSTREAM_KEY": "up-123",
    }
    from rag_ci.run.engine import RunContext, run_redactor

    redact = run_redactor(config, RunContext(), environ={**environ, "DB_URL": "postgres://u:pw@db/secret1"})
    assert redact("postgres://u:pw@db/secret1 up-123") == "*** up-123"  # up-123: under 8 characters
    with pytest.raises(ValidationError, match="secret_env names NOPE"):
        parse_config("target: {kind: command, command: [rag], secret_env: [NOPE]}\n", "rag-ci.yml")


def test_the_action_keeps_judge_keys_and_inputs_out_of_its_own_environment(monkeypatch):
    environ = {
        "RAG_CI_OPENAI_API_KEY": KEY,
        "INPUT_OPENAI-API-KEY": KEY,
        "INPUT_GITHUB-TOKEN": "ghs_token123",
        "RAG_CI_GITHUB_TOKEN": "ghs_token123",
        "INPUT_MODE": "pr",
    }
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = Settings.from_environ(os.environ)
    _prepare_process_environment(settings)
    assert settings.judge_keys["OPENAI_API_KEY"].reveal() == KEY
    assert not [n for n in os.environ if n.startswith("INPUT_")]
    assert KEY not in os.environ.values() and "ghs_token123" not in os.environ.values()


@pytest.mark.parametrize(
    "value",
    [
        "bert-base-uncased",
        "gpt-4.1-mini-2025-04-14",
        "sentence-transformers/all-MiniLM-L6-v2",
        "Qwen2.5-7B-Instruct",
        "claude-haiku-4-5-20251001",
        "https://api.example/v1",
        "disabled",
    ],
)
def test_model_names_words_and_urls_are_no_credentials(value):
    from rag_ci.safety.redaction import looks_like_credential, secret_parts

    assert not looks_like_credential(value) and secret_parts(value) == []


@pytest.mark.parametrize(
    "value",
    [
        "tok_4Fq9ZkLm2",
        "sk-proj-AbCdEf0123456789xyz",
        "AKIAIOSFODNN7EXAMPLE",
        "hunter22",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "3f2a9c0d1e7b44aa3f2a9c0d1e7b44aa",
    ],
)
def test_keys_tokens_and_passwords_are_credentials(value):
    from rag_ci.safety.redaction import looks_like_credential

    assert looks_like_credential(value)


def test_of_a_url_only_its_password_and_credential_looking_query_values_are_secret():
    from rag_ci.safety.redaction import secret_parts

    assert secret_parts("postgres://app:pw12345678@db/x?sslmode=require&token=AbC123dEf456gH") == [
        "pw12345678",
        "AbC123dEf456gH",
    ]


def test_a_name_that_merely_contains_token_or_key_is_no_secret_name():
    from rag_ci.safety.redaction import secret_name

    assert [
        n
        for n in ("TOKENIZER_MODEL", "PIP_KEYRING_PROVIDER", "TOKENIZERS_PARALLELISM", "KEYBOARD")
        if secret_name(n)
    ] == []
    assert all(
        secret_name(n)
        for n in ("OPENAI_APIKEY", "INPUT_GITHUB-TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MY_KEYS")
    )
    redactor = Redactor.from_environment(
        {"TOKENIZER_MODEL": "bert-base-uncased", "HF_TOKEN": "hf_AbCdEf0123456789"}
    )
    assert redactor("bert-base-uncased hf_AbCdEf0123456789") == "bert-base-uncased ***"


@pytest.mark.parametrize(
    "wrap",
    ["\n  ", "\n\t", " ", "\u2028", "\n> ", "  \r\n    "],
    ids=["indented line", "tab", "collapsed to a space", "line separator", "quoted", "CRLF and spaces"],
)
def test_a_judge_key_wrapped_across_two_lines_in_a_401_is_masked_in_both_halves(wrap):
    """Before: the key split across two lines (wrapped, indented, collapsed) still showed its second half."""
    key = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s"
    half = len(key) // 2
    message = (
        f"Incorrect API key provided: {key[:half]}{wrap}{key[half:]}. You can find your API key at https://x"
    )
    shown = Redactor([key])(message)
    assert key[half:] not in shown and key[:half] not in shown and key[-12:] not in shown, shown
    assert shown.startswith("Incorrect API key provided: ***") and shown.endswith(
        ". You can find your API key at https://x"
    )


def test_the_second_half_of_a_key_alone_is_masked_once_its_first_half_was_cut_away():
    """A message cut to its first line, or a tail of stderr, may hold only the key's end."""
    key = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s"
    redact = Redactor([key])
    assert redact(f"...{key[20:]}. You can find") == "...***. You can find"
    assert redact(f"tail: {key[-12:]}") == "tail: ***"
    assert redact(key[-11:]) == key[-11:]  # too little of it to be recognised
    assert redact("an answer about the delay on CAN: 10 ms") == "an answer about the delay on CAN: 10 ms"


def test_the_runners_command_files_never_reach_the_target_by_pass_env_or_env():
    """The target must not even see the paths of GITHUB_OUTPUT, GITHUB_ENV, the summary..."""
    environ = {
        "PATH": "/usr/bin",
        "GITHUB_ENV": "/runner/env",
        "GITHUB_OUTPUT": "/runner/out",
        "GITHUB_PATH": "/runner/path",
        "GITHUB_STEP_SUMMARY": "/runner/summary",
        "GITHUB_STATE": "/runner/state",
        "GITHUB_SHA": "1" * 40,
    }
    extra = {
        **passed_env(["GITHUB_*", "GITHUB_OUTPUT"], environ),
        "MY_OUT": "/runner/out",
        "SUMMARY_AT": "/runner/summary",
        "APP_SETTING": "fine",
    }
    env = process_env(extra, environ)
    assert env["GITHUB_SHA"] == "1" * 40 and env["APP_SETTING"] == "fine"
    assert not any(v.startswith("/runner/") for v in env.values()), {
        k: v for k, v in env.items() if "/runner/" in v
    }


def test_the_base64_of_a_token_in_a_git_authorization_header_is_redacted():
    import base64

    token = "ghs_" + "R4gC1JobT0ken" * 3
    header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()

    shown = Redactor([token])(f"git said: {header}")

    assert base64.b64encode(f"x-access-token:{token}".encode()).decode().rstrip("=") not in shown
    assert "AUTHORIZATION: basic ***" in shown


def test_a_secret_base64_encoded_inside_longer_text_is_redacted_at_any_alignment():
    import base64

    secret = "sk-proj-9fQ2LmZx81KdP0wq"
    for prefix in ("", "a", "ab", "abc"):
        encoded = base64.b64encode(f"{prefix}{secret} and more".encode()).decode()
        urlsafe = base64.urlsafe_b64encode(f"{prefix}{secret}!?>".encode()).decode()
        for text in (encoded, urlsafe):
            shown = Redactor([secret])(text)
            assert "***" in shown and len(shown) < len(text) - 20, (prefix, shown)
