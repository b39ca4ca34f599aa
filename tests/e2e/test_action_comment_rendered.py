"""End to end: the PR comment the action posts, rendered as GitHub renders it (cmark-gfm), read as a
release manager reads it: the commits compared, the kind of failure in the headline, the
counts line outside any quote, leaks first and one row per question, the evidence in the row; and a
push that cannot be evaluated replaces the comment instead of leaving an older verdict on the PR."""

from __future__ import annotations

import json

import pytest
from action_harness import MERGE_BASE_SHA, pull_request_event, run_action

from gfm import body_rows, rendered, section_table
from rag_ci.github.comments import COMMENT_MARKER

pytestmark = pytest.mark.slow

COMPARED = "Compared: baseline 2222222 (main, artifact, today) → this PR 1111111"  # its source and age


def comment(fake) -> str:
    [body] = [c["body"] for c in fake.comments.get(7, []) if COMMENT_MARKER in c["body"]]
    return body


def pr_run(fake, workspace, token, regression: str = ""):
    return run_action(
        fake,
        workspace,
        event_name="pull_request",
        event=pull_request_event(),
        token=token,
        env={"EXAMPLE_RAG_REGRESSION": regression},
        timeout=180,
    )


def counts_paragraph(root):
    [counts] = [p for p in root.find_all("p") if "questions pass" in p.text()]
    return counts


def test_the_chunking_comment_names_the_commits_files_every_regression_under_retrieval_once_with_its_evidence(
    fake, workspace, token, baseline_json
):
    baseline = fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    run = pr_run(fake, workspace, token, "chunking")
    assert run.returncode == 1, run.log
    body = comment(fake)
    root = rendered(body)
    [h2] = root.find_all("h2")
    assert h2.text() == "rag-ci: ❌ 13 regressions"
    compared = root.blocks()[1]
    assert compared.tag == "p" and compared.text() == COMPARED  # before any verdict detail
    links = list(compared.find_all("a"))
    assert len(links) == 2 and f"/actions/runs/{baseline.run_id}" in body and "/actions/runs/4242" in body
    counts = counts_paragraph(root)
    assert not counts.inside("blockquote") and counts.text().startswith(
        "13 regressions · 0 gains — 29/42 questions pass"
    )
    headings = [h.text() for h in root.find_all("h3")]
    assert headings[0] == "Retrieval (13)" and not [h for h in headings if h.startswith("Generation")]
    rows = body_rows(section_table(root, "Retrieval (13)"))
    assert len(rows) == 13 and len({r[0] for r in rows}) == 13  # one row per question
    charge = next(r for r in rows if r[0] == "DU2-CHARGE-TIME")
    assert charge[2] == "keyword 1.00→0.50 (≥ 0.60)"
    assert "the chunk that held “6.5 hours” (du2/battery.md#1) was cut" in charge[3]
    # The RAG answered the same bytes four times: one answer, counted once.
    assert "1 distinct answer, re-asked 3×: fails" in charge[3] and "0/4 answers passed" not in charge[3]
    summaries = [s.text() for s in root.find_all("summary")]
    # One block of entries to paste for the group, not one per question.
    assert [s for s in summaries if "accepted.yml" in s] == [
        "Intended changes? add the entries of those you mean to accepted.yml (13 questions, each with its reason):"
    ]
    assert '  - id: "DU2-CHARGE-TIME"' in body
    assert "judge cost" not in body and "-0 ms" not in body


def test_the_routing_comment_counts_leaks_first_and_lists_them_in_words_before_the_regressions(
    fake, workspace, token, baseline_json
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    run = pr_run(fake, workspace, token, "routing")
    assert run.returncode == 1, run.log
    root = rendered(comment(fake))
    assert root.find_all("h2")[0].text() == "rag-ci: ❌ 13 routing leaks · 2 regressions"
    counts = counts_paragraph(root)
    assert not counts.inside("blockquote") and counts.text().startswith(
        "13 routing leaks · 2 regressions · 0 gains"
    )
    headings = [h.text() for h in root.find_all("h3")]
    assert headings[:2] == ["Routing leaks (13)", "Retrieval (2)"]
    leaks = body_rows(section_table(root, "Routing leaks"))
    assert len(leaks) == 13 and ["DU2-TORQUE", "du2", "leaked: 2 contexts from du3", "passed"] in leaks
    assert len(body_rows(section_table(root, "Retrieval (2)"))) == 2
    where = next(p.text() for p in root.find_all("p") if p.text().startswith("Where:"))
    assert where.endswith("— routing 13 · retrieval 2")


def test_the_clean_comment_says_no_regression_and_names_the_commits(fake, workspace, token, baseline_json):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    run = pr_run(fake, workspace, token)
    assert run.returncode == 0, run.log
    root = rendered(comment(fake))
    assert root.find_all("h2")[0].text() == "rag-ci: ✅ no regression"  # never a latency word: the load's
    assert root.blocks()[1].text() == COMPARED
    assert counts_paragraph(root).text().startswith("0 regressions · 0 gains — 42/42 questions pass")
    # nothing flipped: no significance line
    assert root.find_all("h3") == [] and "For context" not in comment(fake)


def test_a_failed_build_after_a_green_push_replaces_the_comment_with_not_evaluated(
    fake, workspace, token, baseline_json
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    green = pr_run(fake, workspace, token)
    assert green.returncode == 0 and "no regression" in comment(fake)
    config = workspace / "rag-ci.yml"
    config.write_text(
        config.read_text().replace('"python rag/ingest.py"', '"python rag/ingest.py && exit 3"')
    )

    red = pr_run(fake, workspace, token)

    assert red.returncode == 2, red.log
    body = comment(fake)  # the same sticky comment, edited: never the green verdict beside a red check
    root = rendered(body)
    assert root.find_all("h2")[0].text().startswith("rag-ci: ⛔ not evaluated — build step failed (exit 3)")
    assert "no regression" not in body and "42/42" not in body
    assert "[the workflow run](https://github.example/acme/rag/actions/runs/4242)" in body
    assert "this PR 1111111" in root.text()


def test_a_stale_acceptance_is_named_with_its_file_and_the_counts_line_stays_outside_its_quote(
    fake, workspace, token, baseline_json
):
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    (workspace / "accepted.yml").write_text(
        'accepted:\n  - id: DU2-CHARGE-TIME\n    question_hash: "14de614e5968"\n    reason: "re-chunking, see #231"\n'
    )
    run = pr_run(fake, workspace, token)
    assert run.returncode == 0, run.log
    body = comment(fake)
    root = rendered(body)
    [stale] = [q for q in root.find_all("blockquote") if "Stale acceptances" in q.text()]
    assert "DU2-CHARGE-TIME at accepted.yml:2: it did not regress in this run" in stale.text()
    assert not counts_paragraph(root).inside("blockquote")  # today: swallowed by the quote above it
    cmp = json.loads((workspace / "rag-ci-output" / "comparison.json").read_text())
    assert cmp["stale_accepted"][0]["where"] == "accepted.yml:2"


def test_a_target_that_dies_at_start_quotes_its_stderr_once_in_the_comment_the_check_run_and_the_log(
    fake, workspace, token, baseline_json
):
    # The example runs two copies of its command: each wrote the same stderr, and the cause
    # quoted both, one after the other (issue 55: "the target's stderr line quoted twice").
    fake.add_baseline_artifact({"results.json": baseline_json}, head_sha=MERGE_BASE_SHA)
    (workspace / "crash.py").write_text(
        "import sys\nprint('FileNotFoundError: index bm25.pkl is missing, run ingest', file=sys.stderr)\nsys.exit(1)\n"
    )
    config = workspace / "rag-ci.yml"
    config.write_text(config.read_text().replace('["python", "rag/server.py"]', '["python", "crash.py"]'))

    run = pr_run(fake, workspace, token)

    assert run.returncode == 2, run.log
    said = "FileNotFoundError: index bm25.pkl is missing, run ingest"
    body = comment(fake)
    assert (
        rendered(body).find_all("h2")[0].text().startswith("rag-ci: ⛔ not evaluated — target command exited")
    )
    assert body.count(said) == 1, body
    [check] = fake.check_runs.values()
    assert (check["output"]["title"] + check["output"]["summary"]).count(said) == 1, check["output"]
    assert run.log.count(said) == 1, run.log
