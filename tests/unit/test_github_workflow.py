"""Workflow commands, step outputs and the job summary, as the runner reads them."""

from __future__ import annotations

import io

from rag_ci.github.workflow import Runner, escape_data, escape_property, workflow_command


def test_data_escaping_keeps_a_message_on_one_command_line():
    assert escape_data("50% done\r\n::error::injected") == "50%25 done%0D%0A::error::injected"
    assert escape_property("title: a, b") == "title%3A a%2C b"
    line = workflow_command("error", "line one\nline two", title="Q-1: regression")
    assert line == "::error title=Q-1%3A regression::line one%0Aline two"
    assert "\n" not in line


def test_add_mask_is_emitted_only_for_a_runner():
    stream = io.StringIO()
    Runner(step_summary=None, github_output=None, in_actions=False, stream=stream).mask("s3cret")
    assert stream.getvalue() == ""
    Runner(step_summary=None, github_output=None, in_actions=True, stream=stream).mask("s3cret")
    assert stream.getvalue() == "::add-mask::s3cret\n"


def test_outputs_use_a_delimiter_no_value_contains(tmp_path):
    output = tmp_path / "output"
    runner = Runner(step_summary=None, github_output=output, in_actions=True, stream=io.StringIO())
    runner.set_outputs({"verdict": "fail", "note": "two\nlines\nrag_ci_deadbeef"})
    text = output.read_text()
    blocks = text.split("\n")
    assert (
        blocks[0].startswith("verdict<<rag_ci_")
        and blocks[1] == "fail"
        and blocks[2] == blocks[0].split("<<")[1]
    )
    delimiter = blocks[3].split("<<")[1]
    assert delimiter not in "two\nlines\nrag_ci_deadbeef".splitlines()


def test_summary_is_appended_not_overwritten(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    Runner(step_summary=summary, github_output=None, in_actions=True, stream=io.StringIO()).add_summary(
        "## rag-ci"
    )
    assert summary.read_text() == "# earlier step\n## rag-ci\n\n"
