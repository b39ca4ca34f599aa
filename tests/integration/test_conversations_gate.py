"""Conversations gated end to end: the example RAG's chat mode (examples/rag-ci.chat.yml), its
history-dropping switch, unchanged re-runs under a judge, and a chat-completions API mapped
by config alone (tests/fakes/chat_api_rag.py)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders import EXAMPLES, free_port, write
from fakes.judge_setup import JUDGE_MODELS
from rag_ci.cli import cli
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.view import regression_rows
from rag_ci.files.project import load_project
from rag_ci.run.engine import RunOptions, run_project

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
# The turns of examples/conversations.yml that need the history, and the one after them.
FOLLOW_UPS = {"C-TORQUE#2", "C-E07#2", "C-DERATING#2", "C-LOCK#2", "C-E07-SCRIPTED#2"}


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chat") / "examples"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".index", "out"))
    return folder


def cli_run(config: Path, output: Path, baseline: Path | None = None, env=None):
    args = ["run", "--config", str(config), "--output", str(output), "--format", "json", "--no-progress"]
    if baseline is not None:
        args += ["--baseline", str(baseline)]
    result = CliRunner().invoke(cli, args, env=env or {}, catch_exceptions=False)
    # A run without a baseline compares with nothing: no report, its results only.
    return result, json.loads(result.output[result.output.index("{") :]) if baseline else None


def test_the_example_ships_live_and_scripted_conversations_over_both_corpora():
    questions = load_project(EXAMPLES / "rag-ci.chat.yml").questions.questions
    conversations = {q.conversation: q.mode for q in questions}
    assert len(conversations) >= 6 and set(conversations.values()) == {"live", "scripted"}
    assert {c for q in questions for c in q.doc_id} == {"du2", "du3"}
    cross = [q for q in questions if len(q.doc_id) > 1 and q.turn > 1]
    assert cross, "a follow-up routed to both corpora"
    said = CliRunner().invoke(cli, ["validate", "--config", str(EXAMPLES / "rag-ci.chat.yml")])
    assert said.exit_code == 0 and "turns of 6 conversations (4 live, 2 scripted)" in said.output


def test_dropping_the_history_fails_the_gate_naming_the_follow_up_turns(example, tmp_path):
    config = example / "rag-ci.chat.yml"
    result, _ = cli_run(config, tmp_path / "base.json", env={"EXAMPLE_RAG_REGRESSION": ""})
    base = json.loads((tmp_path / "base.json").read_text())
    assert result.exit_code == 0 and {q["verdict"] for q in base["questions"]} == {"pass"}, result.output
    second = {q["id"]: q for q in base["questions"]}["C-TORQUE#2"]
    first = {q["id"]: q for q in base["questions"]}["C-TORQUE#1"]
    assert second["request"]["conversation_id"] == "C-TORQUE"
    assert second["request"]["messages"][1] == {"role": "assistant", "content": first["answer"]}

    result, report = cli_run(
        config, tmp_path / "head.json", tmp_path / "base.json", env={"EXAMPLE_RAG_REGRESSION": "history"}
    )
    assert result.exit_code == 1 and report["verdict"] == "fail"
    regressed = {r["id"] for r in report["regressions"]}
    assert regressed >= FOLLOW_UPS and not any(r.endswith("#1") for r in regressed)
    assert report["following"] == {"C-DERATING#3": "C-DERATING#2"}

    shown = CliRunner().invoke(cli, ["compare", str(tmp_path / "base.json"), str(tmp_path / "head.json")])
    assert "later turns following from it: C-DERATING\\#3" in shown.output
    assert "1 later turn following from them" in shown.output
    assert "asked after: user: What is the peak torque of the DU-2? · assistant: " in shown.output
    html = tmp_path / "report.html"
    args = [
        "report",
        str(tmp_path / "head.json"),
        "--baseline",
        str(tmp_path / "base.json"),
        "--format",
        "html",
    ]
    CliRunner().invoke(cli, [*args, "-o", str(html)])
    assert "later turns following from it: C-DERATING#3" in html.read_text()


def test_ten_unchanged_reruns_under_a_judge_cost_no_judge_call_and_find_no_regression(
    example, tmp_path, fake_judge, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.delenv("EXAMPLE_RAG_REGRESSION", raising=False)
    server = fake_judge("openai")
    config = example / "rag-ci.judged.yml"
    judged = (example / "rag-ci.chat.yml").read_text() + textwrap.dedent(f"""
        judge:
          provider: openai
          model: {JUDGE_MODELS["openai"]}
          base_url: {server.base_url}
          backoff_s: 0.01
        """)
    config.write_text(judged)
    project = load_project(config)
    base = asyncio.run(run_project(project, RunOptions(output=tmp_path / "base.json", progress=False)))
    judged_turns = [q for q in base.questions if any(m.kind == "judge" for m in q.metrics.values())]
    assert len(judged_turns) == len(base.questions) and server.requests > 0
    whole = {q.id for q in base.questions if "knowledge_retention" in q.metrics}  # conversation-level
    assert whole == {
        "C-TORQUE#2",
        "C-E07#2",
        "C-DERATING#3",
        "C-DU2-BATTERY#2",
        "C-LOCK#2",
        "C-E07-SCRIPTED#2",
    }
    cold = server.requests
    for i in range(10):
        head = asyncio.run(
            run_project(
                project,
                RunOptions(output=tmp_path / f"head{i}.json", baseline=base, progress=False, build=False),
            )
        )
        comparison = compare(base, head)
        assert comparison.verdict == "pass" and comparison.regressions == () and comparison.following == {}
    assert server.requests == cold


CHAT_QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: How long does charging take?, doc_id: a, sources: [a/charging.md], keywords: ["6 hours"]}
conversations:
  - id: C1
    doc_id: a
    turns:
      - {user: I need to charge my battery., sources: [a/charging.md]}
      - {user: How long will that take?, sources: [a/charging.md], keywords: ["6 hours"]}
      - {user: And where should I store it afterwards?, doc_id: [a, b], sources: [b/storage.md], keywords: [dry room]}
"""
CHAT_MAPPING = """
  request: {model: rag-1, messages: "{messages}", user: "{conversation_id}", metadata: {collections: "{corpora}"}}
  response:
    answer: choices[0].message.content
    contexts: citations
    context: {text: content, doc_id: collection, source: file}
    usage: "{model: model, input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens}"
"""


def chat_project(tmp_path: Path) -> Path:
    port = free_port()
    write(tmp_path / "questions.yml", CHAT_QUESTIONS)
    return write(
        tmp_path / "rag-ci.yml",
        "questions: questions.yml\ncorpora: {a: {description: A}, b: {description: B}}\n"
        "metrics: {hit_at_k: {k: 5}, keyword_coverage: {threshold: 0.6}}\n"
        f"target:\n  kind: http\n  url: http://127.0.0.1:{port}/v1/chat/completions\n  health: /health\n"
        f"  start: [{sys.executable}, {FAKES / 'chat_api_rag.py'}, '{port}']\n  pass_env: [CHAT_API_FORGET]\n"
        + CHAT_MAPPING,
    )


def test_a_chat_completions_api_is_gated_with_a_mapping_alone(tmp_path):
    config = chat_project(tmp_path)
    result, _ = cli_run(config, tmp_path / "base.json")
    run = {q["id"]: q for q in json.loads((tmp_path / "base.json").read_text())["questions"]}
    assert result.exit_code == 0 and {q["verdict"] for q in run.values()} == {"pass"}, result.output
    assert [run[t]["usage"]["input_tokens"] for t in ("Q1", "C1#1", "C1#2", "C1#3")] == [1, 1, 3, 5]
    assert {c["doc_id"] for c in run["C1#3"]["contexts"]} == {"a", "b"}  # routed to both, with the history

    result, report = cli_run(
        config, tmp_path / "head.json", tmp_path / "base.json", env={"CHAT_API_FORGET": "1"}
    )
    assert result.exit_code == 1
    assert {r["id"] for r in report["regressions"]} == {"C1#2"}  # "that" means nothing without the history


LIVE_RAG = """
import json

def answer(request):
    with open({log!r}, "a") as log:
        log.write(json.dumps(request) + "\\n")
    said = [m["content"] for m in request.get("messages", []) if m["role"] == "user"]
    heard = " ".join(said[-1:] if {forget} else said)
    if "delay" in heard.lower():
        text = "The delay is {delay}."
        return {{"answer": text, "contexts": [{{"text": text, "doc_id": "a", "source": "a/x.md#0"}}]}}
    return {{"answer": "I could not find this in the documents.", "contexts": []}}
"""
LIVE_QUESTIONS = """
version: 1
conversations:
  - id: C
    doc_id: a
    turns:
      - {user: What is the delay?, keywords: ["10 ms"]}
      - {user: And is that fast enough?, keywords: ["10 ms"]}
"""


def live_run(tiny_project, tmp_path, name: str, *, forget=False, delay="10 ms", baseline=None):
    """A run of LIVE_QUESTIONS against LIVE_RAG (a python target logging each request): the run,
    and the requests the RAG received."""
    log = tmp_path / f"{name}.log"
    (tmp_path / f"{name}_rag.py").write_text(LIVE_RAG.format(log=str(log), forget=forget, delay=delay))
    target = f"target:\n  kind: python\n  entry: {name}_rag:answer\n  path: ['.']\n"
    config = tiny_project(target, LIVE_QUESTIONS, "metrics: {keyword_coverage: {threshold: 0.6}}\n")
    options = RunOptions(output=tmp_path / f"{name}.json", baseline=baseline, progress=False, build=False)
    result = asyncio.run(run_project(load_project(config), options))
    return result, [json.loads(line) for line in log.read_text().splitlines()]


def test_a_flipped_live_turn_is_re_asked_in_its_conversation_asked_again_whole(tiny_project, tmp_path):
    base, _ = live_run(tiny_project, tmp_path, "base")
    assert [q.verdict for q in base.questions] == ["pass", "pass"]
    head, asked = live_run(tiny_project, tmp_path, "head", forget=True, baseline=base)
    assert head.by_id()["C#2"].verdict == "fail" and head.by_id()["C#2"].samples  # re-asked
    conversations = [
        (r["id"], r.get("conversation_id")) for r in asked if not r["id"].startswith("rag-ci-warmup")
    ]
    assert conversations[:2] == [("C#1", "C"), ("C#2", "C")]
    again = conversations[2:]
    assert again[:2] == [("C#1~2", "C~2"), ("C#2", "C~2")]  # the first turn asked again, then the turn
    second = next(r for r in asked if r.get("conversation_id") == "C~2" and r["id"] == "C#2")
    assert second["messages"][1] == {"role": "assistant", "content": "The delay is 10 ms."}
    assert compare(base, head).regressions[0].id == "C#2"


def test_an_early_answer_that_changed_shows_the_later_turn_as_following_from_it(tiny_project, tmp_path):
    base, _ = live_run(tiny_project, tmp_path, "base")
    head, asked = live_run(tiny_project, tmp_path, "head", delay="20 ms", baseline=base)
    follow_up = next(r for r in asked if r["id"] == "C#2" and r["conversation_id"] == "C")
    assert follow_up["messages"][1]["content"] == "The delay is 20 ms."  # the changed answer is its history
    comparison = compare(base, head)
    assert {c.id for c in comparison.regressions} == {"C#1", "C#2"} and comparison.verdict == "fail"
    assert comparison.following == {"C#2": "C#1"}
    assert [c.id for c in regression_rows(comparison)] == ["C#1"]
