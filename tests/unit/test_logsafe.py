"""rag_ci.safety.logsafe.neutralise: untrusted text printed by rag-ci is never a workflow command.

Each form the runner obeys is checked against a model of its parser (tests/fakes/actions_runner.py),
and so is every print boundary that routes through it: the Runner, the build steps, the CLI."""

from __future__ import annotations

import asyncio
import io

import pytest
from click.testing import CliRunner

from fakes.actions_runner import runner_commands
from rag_ci.safety.logsafe import neutralise

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
    runner.info(
        "[rag-ci] kept the last known good verdict of 1 errored question(s): Q\r::stop-commands::pwned"
    )
    runner.info(
        "[rag-ci] 1 accepted regression entry in acc\r::warning::pwned.yml ##[set-output name=verdict]pass"
    )
    runner.group("rag-ci: ::warning::pwned")
    runner.warning("policy ##[set-output name=verdict]pass\n::error::pwned", title="t ##[x]")
    runner.error("msg", title="RAG regression: ##[set-output name=verdict]pass")
    runner.end_group()
    commands = runner_commands(stream.getvalue())
    assert [name for name, _ in commands] == ["group", "warning", "error", "endgroup"]
    assert not any(data.startswith("pwned") for _, data in commands)


def test_the_runner_redacts_every_line_summary_and_output_but_the_mask(tmp_path):
    from rag_ci.github.workflow import Runner
    from rag_ci.safety.redaction import Redactor

    key = "sk-proj-0123456789abcdefABCDEF"
    stream, summary, output = io.StringIO(), tmp_path / "summary.md", tmp_path / "output"
    runner = Runner(
        step_summary=summary, github_output=output, in_actions=True, stream=stream, redact=Redactor([key])
    )
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
    from rag_ci.run.engine import run_build_steps

    log = io.StringIO()
    steps = [
        "printf 'ok\\r::stop-commands::pwned\\nx ##[set-output name=verdict]pass\\n'",
        "true \r::warning::pwned",
    ]
    asyncio.run(run_build_steps(steps, tmp_path, {"PATH": "/usr/bin:/bin"}, log=log))
    assert "pwned" in log.getvalue()
    assert runner_commands(log.getvalue()) == []


def test_cli_errors_and_reports_are_printed_inert(tmp_path):
    from rag_ci.cli import cli

    (tmp_path / "rag-ci.yml").write_text(
        "questions: q.yml\ncorpora: {a: {description: A}}\n"
        "target: {kind: command, command: [python, rag.py]}\n"
    )
    (tmp_path / "q.yml").write_text(
        'version: 1\nquestions:\n  - {id: "Q\\r::stop-commands::pwned", question: q, doc_id: "b ##[set-output name=v]x"}\n'
    )
    result = CliRunner().invoke(cli, ["validate", "--config", str(tmp_path / "rag-ci.yml")])
    assert result.exit_code == 2 and "pwned" in result.output
    assert runner_commands(result.output) == []


def test_a_corpus_path_carrying_workflow_commands_reaches_stderr_inert(tmp_path):
    """Before: the engine's `[rag-ci] warning: {exc}` print carried a corpus path's
    `\\n::set-output ...\\n::add-mask::` to the runner raw."""
    from pathlib import Path

    from rag_ci.cli import cli

    fakes = Path(__file__).resolve().parents[1] / "fakes"
    (tmp_path / "rag-ci.yml").write_text(
        "questions: q.yml\n"
        'corpora: {a: {description: A, path: "docs\\n::set-output name=verdict::pass\\n::add-mask::pwned"}}\n'
        f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{fakes}'], warmup: 0}}\n"
        "judge: {provider: none}\nmetrics: {keyword_coverage: {}}\n"
    )
    (tmp_path / "q.yml").write_text(
        "version: 1\nquestions:\n  - {id: A, question: delay?, doc_id: a, keywords: [10 ms]}\n"
    )
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(tmp_path / "rag-ci.yml"), "-o", str(tmp_path / "r.json"), "--no-progress"],
    )
    assert "pwned" in result.output, result.output
    assert runner_commands(result.output) == []


# Every place in rag_ci/ that prints: each passes its text through neutralise (or
# rag_ci.cli.echo.echo, which does), or is listed here — by its function and the start of
# what it prints, so a new print in the same function is not let through — with why its
# text is rag-ci's own.
OWN_TEXT_ONLY = {
    "rag_ci/cli/__init__.py:main 'Aborted!'": "a constant",
    "rag_ci/cli/echo.py:echo_json text.replace('##[', '##\\\\u005b')": "JSON from json.dumps: control characters escaped, `##[` escaped here",
    "rag_ci/run/engine.py:_resume f'[rag-ci] resume: {len(kept)} questions": "two counts",
    "rag_ci/run/engine.py:_judge '[rag-ci] fake judge — its metrics are a": "a constant",
    "rag_ci/github/workflow.py:Runner._emit line + '\\n'": "the Runner's one output: its callers pass lines made inert (_safe) or its own commands",
    "rag_ci/run/prepare.py:run_build_steps f'[rag-ci] build step done in {time.mono": "a duration and a count (the step and its output go through neutralise)",
    "rag_ci/runtime/progress.py:LineProgress.advance f'[rag-ci] {self.done}/{self.total} {sel": "counts, and the label and failure words its callers pass as constants",
    "rag_ci/runtime/signals.py:interrupted f'rag-ci: interrupted by {interrupted_si": "a signal's name and its callers' constant sentence",
    "rag_ci/targets/process_user.py:_choose_user f'[rag-ci] note: running the target as r": "a constant and a variable's name",
}


def _print_sites():
    """(module:function, the printed expression) for every print/echo/stream write in rag_ci/."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "rag_ci").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes: list[tuple[ast.AST, str]] = []

        def visit(node, outer: tuple[ast.AST, ...]):
            for child in ast.iter_child_nodes(node):
                inner = outer
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = (*outer, child)
                if isinstance(child, ast.Call):
                    # a site is named by its top-level function, or its class and method
                    names = [
                        d.name for d in outer[: 2 if outer and isinstance(outer[0], ast.ClassDef) else 1]
                    ]
                    scopes.append((child, ".".join(names)))  # noqa: B023 (this file's scopes)
                visit(child, inner)

        visit(tree, ())
        for call, scope in scopes:
            func = ast.unparse(call.func)
            receiver = func.rsplit(".", 1)[0] if "." in func else ""
            is_print = func in {
                "print",
                "click.echo",
                "click.secho",
                "sys.stderr.write",
                "sys.stdout.write",
            } or (
                func.endswith(".write") and any(s in receiver for s in ("stderr", "stdout", "stream", "log"))
            )
            if is_print and call.args:
                yield f"{path.relative_to(root).as_posix()}:{scope}", call.args[0]


def test_every_print_in_rag_ci_passes_its_text_through_the_log_boundary():
    """The boundary is enforced, not remembered: a new print of untrusted text fails here.
    (`echo(...)` in rag_ci/cli is rag_ci.cli.echo.echo, which neutralises: not a site.)"""
    import ast

    unguarded, seen = [], set()
    for site, printed in _print_sites():
        key = f"{site} {ast.unparse(printed)[:40]}"
        seen.add(key)
        guarded = isinstance(printed, ast.Call) and ast.unparse(printed.func) in {
            "neutralise",
            "logsafe.neutralise",
        }
        if not guarded and key not in OWN_TEXT_ONLY:
            unguarded.append(f"{site}: {ast.unparse(printed)[:100]}")
    assert unguarded == []
    assert set(OWN_TEXT_ONLY) <= seen, f"stale allow-list entries: {set(OWN_TEXT_ONLY) - seen}"


def test_the_only_echo_in_rag_ci_is_the_boundary():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "rag_ci"
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"(?<![.\w])echo\(", text) and path.name != "echo.py":
            assert re.search(r"from rag_ci\.cli\.echo import .*\becho\b", text), path
