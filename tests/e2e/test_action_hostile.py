"""End to end: what a hostile RAG answers cannot break or abuse the PR comment."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from action_harness import (
    HEAD_SHA,
    MERGE_BASE_SHA,
    assert_token_never_leaked,
    clean_env,
    pull_request_event,
    run_action,
)

from fakes.fake_github import FakeGitHubServer
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent

CONFIG = """\
questions: questions.yml
corpora: {a: {description: A}, b: {description: B}}
target: {kind: python, entry: "hostile_rag:answer", path: ["."], pass_env: [HOSTILE_RAG_BROKEN], generator_model: hostile-1, generator_family: hostile}
metrics: {hit_at_k: {k: 5}, keyword_coverage: {threshold: 0.6}}
"""
# Every question of the broken hostile RAG errors: allowed here so that the comparison (and
# its rows of hostile text) is rendered; the broken-run report is checked separately.
TOLERANT_GATE = "gate: {max_error_rate: 1.0}\n"
QUESTIONS = """\
version: 1
questions:
  - {id: Q-A, question: What is the delay on a?, doc_id: a, sources: [a/x.md], keywords: ["10 ms"]}
  - {id: Q-B, question: What is the delay on b?, doc_id: b, sources: [b/y.md], keywords: ["20 ms"]}
"""


def hostile_repository(root: Path, gate: str = TOLERANT_GATE) -> Path:
    root.mkdir(parents=True)
    (root / "rag-ci.yml").write_text(CONFIG + gate)
    (root / "questions.yml").write_text(QUESTIONS)
    shutil.copy(HERE / "hostile_rag.py", root / "hostile_rag.py")
    return root


def test_hostile_answer_text_is_escaped_and_cannot_see_the_token(tmp_path):
    token = "ghs_" + secrets.token_hex(18)
    main_checkout = hostile_repository(tmp_path / "main")
    subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", "run", "-o", "results.json", "--no-progress"],
        cwd=main_checkout,
        env=clean_env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    workspace = hostile_repository(tmp_path / "workspace")

    with FakeGitHubServer(token=token) as fake:
        fake.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        fake.add_baseline_artifact(
            {"results.json": (main_checkout / "results.json").read_bytes()}, head_sha=MERGE_BASE_SHA
        )
        run = run_action(
            fake,
            workspace,
            event_name="pull_request",
            event=pull_request_event(),
            token=token,
            env={"HOSTILE_RAG_BROKEN": "1"},
        )

        assert run.returncode == 1, run.log
        assert run.outputs["regressions"] == "2"
        [comment] = fake.comments[7]
        body = comment["body"]
        assert body.count(COMMENT_MARKER) == 1  # the answer's fake marker was escaped
        assert body.startswith(COMMENT_MARKER)
        # rag-ci's own fenced blocks (the accepted-file entries to paste) hold only JSON-quoted values.
        own_blocks = re.findall(
            r"<details><summary>Intended [^\n]*</summary>\n\n```yaml\n(.*?)\n```\n\n</details>", body, re.S
        )
        assert len(own_blocks) == 1 and re.fullmatch(
            r'(  - id: "Q-[AB]"\n    question_hash: "[0-9a-f]{16}"\n    reason: [^\n]*\n?){2}', own_blocks[0]
        ), own_blocks
        rest = re.sub(r"<details><summary>Intended .*?</details>", "", body, flags=re.S)
        for raw in ("<script>", "<img", "@everyone", "@acme/maintainers", "```", "| injected | row |"):
            assert raw not in rest, f"unescaped {raw!r} in the comment"
        # `\](` is an escaped bracket: it closes no link
        assert not re.search(r"(?<!\\)\]\(javascript:", rest)
        assert "&lt;script&gt;" in body and "&#64;everyone" in body
        # The hostile text stayed inside its table cell: every regression row has 4 cells.
        table = rest[rest.index("### Errors (2)") :]
        rows = [line for line in table.splitlines() if line.startswith("| Q-")][:2]
        assert len(rows) == 2 and all(line.replace("\\|", "").count("|") == 5 for line in rows)
        # The target ran without the token in its environment: it tried to print it.
        results = json.loads((workspace / "rag-ci-output" / "results.json").read_text())
        assert all(q["error"].endswith("token=//") for q in results["questions"])
        # Annotations carry the text on one line each: it cannot start a workflow command.
        commands = [
            line.split("::")[1].split(" ")[0] for line in run.stdout.splitlines() if line.startswith("::")
        ]
        assert sorted(commands) == ["add-mask", "endgroup", "error", "error", "group"]
        assert_token_never_leaked(token, run, fake, tmp_path)


def test_hostile_error_text_in_a_broken_run_report_is_escaped(tmp_path):
    token = "ghs_" + secrets.token_hex(18)
    workspace = hostile_repository(tmp_path / "workspace", gate="")  # default max_error_rate: a broken run

    with FakeGitHubServer(token=token) as fake:
        fake.merge_bases[HEAD_SHA] = MERGE_BASE_SHA
        run = run_action(
            fake,
            workspace,
            event_name="pull_request",
            event=pull_request_event(),
            token=token,
            env={"HOSTILE_RAG_BROKEN": "1"},
        )

        assert run.returncode == 2, run.log
        [comment] = fake.comments[7]
        body = comment["body"]
        assert "broken run: not a result" in body and "2/2 questions errored" in body
        assert body.count(COMMENT_MARKER) == 1 and body.startswith(COMMENT_MARKER)
        for raw in ("<script>", "<img", "@everyone", "@acme/maintainers", "```"):
            assert raw not in body, f"unescaped {raw!r} in the comment"
        # The long cause is cut at a word boundary, before its link: what is shown
        # of it stays inert, and the hidden marker it carried is text, not a second marker.
        assert not re.search(r"(?<!\\)\]\(javascript:", body)  # an escaped bracket starts no link
        assert "&lt;!-- rag-ci:comment --&gt;" in body
        assert_token_never_leaked(token, run, fake, tmp_path)
