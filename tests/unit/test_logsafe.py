"""rag_ci.logsafe.neutralise: untrusted text printed by rag-ci is never a workflow command.

Each form the runner obeys is checked against a model of its parser (tests/fakes/actions_runner.py),
and so is every print boundary that routes through it: the Runner, the build steps, the CLI."""

from __future__ import annotations

import asyncio
import io

import pytest
from click.testing import CliRunner

from fakes.actions_runner import runner_commands
from rag_ci.logsafe import neutralise

HOSTILE = {
    "command at the start": "::stop-commands::pwned",
    "after spaces": "   ::warning::pwned",
    "after a no-break space": "\u00a0\u2003::warning::pwned",
    "after a bare CR": "[build] ok\r::stop-commands::pwned",
    "after CR LF": "ok\r\n::warning::pwned",
    "after LF": "ok\n::add-mask::pwned",
    "legacy, mid-line": "Q-1 ##[set-output name=verdict]pass",
    "legacy, at the start": "##[error]pwned",
    "policy preview": "judge.family none → x\r::warning::pwned",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_every_form_the_runner_obeys_is_made_plain_text(text):
    assert runner_commands(text) != []  # the model of the runner does obey the raw text
    assert runner_commands(neutralise(text)) == []


def test_the_text_stays_readable_and_line_breaks_stay_line_breaks():
    assert neutralise("[build] ok\r::stop-commands::T") == "[build] ok\\r::stop-commands::T"
    assert neutralise("a\n::b::c") == "a\n:\\:b::c"
    assert neutralise("x ##[set-output name=v]p") == "x #\\#[set-output name=v]p"
    assert neutralise("one\r\ntwo") == "one\ntwo"
    assert neutralise("Q::1 and a: b") == "Q::1 and a: b"  # `::` mid-line is no command
    assert neutralise("nul\x00 bell\x07 tab\t esc\x1b[0m") == "nul\\x00 bell\\x07 tab\t esc\x1b[0m"
    assert neutralise("") == ""


def test_the_runner_prints_untrusted_text_inert_but_its_own_commands_as_commands(tmp_path):
    from rag_ci.github.workflow import Runner

    stream = io.StringIO()
    runner = Runner(step_summary=None, github_output=None, in_actions=True, stream=stream)
    runner.info("[rag-ci] kept the last known good verdict of 1 errored question(s): Q\r::stop-commands::pwned")
    runner.info("[rag-ci] 1 accepted regression entry in acc\r::warning::pwned.yml ##[set-output name=verdict]pass")
    runner.group("rag-ci: ::warning::pwned")
    runner.warning("policy ##[set-output name=verdict]pass\n::error::pwned", title="t ##[x]")
    runner.error("msg", title="RAG regression: ##[set-output name=verdict]pass")
    runner.end_group()
    commands = runner_commands(stream.getvalue())
    assert [name for name, _ in commands] == ["group", "warning", "error", "endgroup"]
    assert not any(data.startswith("pwned") for _, data in commands)


def test_the_runner_redacts_every_line_summary_and_output_but_the_mask(tmp_path):
    from rag_ci.github.workflow import Runner
    from rag_ci.redaction import Redactor

    key = "sk-proj-0123456789abcdefABCDEF"
    stream, summary, output = io.StringIO(), tmp_path / "summary.md", tmp_path / "output"
    runner = Runner(step_summary=summary, github_output=output, in_actions=True, stream=stream, redact=Redactor([key]))
    runner.mask(key)
    runner.info(f"key {key[:15]}\n{key[15:]}")  # cut across a line break
    runner.error(f"401: {key}", title=key)
    runner.add_summary(f"## {key}")
    runner.set_outputs({"verdict": key})
    assert stream.getvalue().splitlines()[0] == f"::add-mask::{key}"
    rest = "\n".join(stream.getvalue().splitlines()[1:])
    for text in (rest, summary.read_text(), output.read_text()):
        assert key[:12] not in text and key[-12:] not in text and "***" in text


def test_build_step_text_and_output_are_printed_inert(tmp_path):
    from rag_ci.engine import run_build_steps

    log = io.StringIO()
    steps = ["printf 'ok\\r::stop-commands::pwned\\nx ##[set-output name=verdict]pass\\n'", "true \r::warning::pwned"]
    asyncio.run(run_build_steps(steps, tmp_path, {"PATH": "/usr/bin:/bin"}, log=log))
    assert "pwned" in log.getvalue()
    assert runner_commands(log.getvalue()) == []


def test_cli_errors_and_reports_are_printed_inert(tmp_path):
    from rag_ci.cli import cli

    (tmp_path / "rag-ci.yml").write_text("questions: q.yml\ncorpora: {a: {description: A}}\n"
                                         "target: {kind: command, command: [python, rag.py]}\n")
    (tmp_path / "q.yml").write_text('version: 1\nquestions:\n  - {id: "Q\\r::stop-commands::pwned", question: q, doc_id: "b ##[set-output name=v]x"}\n')
    result = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert result.exit_code == 2 and "pwned" in result.output
    assert runner_commands(result.output) == []
