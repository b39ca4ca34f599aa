"""The action's annotations (at the question's line, in the `rag-ci gate` check run) and its job
summary (the full report), against FakeGitHubServer with canned runs (no RAG is started)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from builders import metric, question, run
from fakes.fake_github import FakeGitHubServer
from rag_ci.action.entry import EXIT_REGRESSION, action
from rag_ci.action.settings import Secret, Settings
from rag_ci.files.results_file import save_results
from rag_ci.github.client import connect
from rag_ci.github.workflow import Runner

PR_EVENT = {
    "pull_request": {
        "number": 7,
        "head": {"sha": "e" * 40, "repo": {"full_name": "acme/rag"}},
        "base": {"ref": "main"},
    },
    "repository": {"default_branch": "main"},
}
REASON = "the retrieved chunks no longer hold the expected figure; " * 6  # a long `why`: rows cost room


@pytest.fixture
def fake():
    with FakeGitHubServer(token="t0ken") as server:
        yield server


def project_with(tmp_path: Path, n: int, *, corpus_path: str | None = None) -> Path:
    """rag-ci.yml and a questions.yml of `n` questions Q000..., each over several lines."""
    corpus = f"{{description: A, path: {corpus_path}}}" if corpus_path else "{description: A}"
    (tmp_path / "rag-ci.yml").write_text(
        f"questions: eval/questions.yml\ncorpora: {{a: {corpus}}}\n"
        "target: {kind: python, entry: 'tiny_rag:answer'}\n"
    )
    (tmp_path / "eval").mkdir()
    items = "".join(
        f"  # question {i}\n  - id: Q{i:03d}\n    question: What is {i}?\n    doc_id: a\n    sources: [a/x.md]\n"
        for i in range(n)
    )
    (tmp_path / "eval" / "questions.yml").write_text(f"version: 1\nquestions:\n{items}")
    return tmp_path


def id_lines(path: Path) -> dict[str, int]:
    return {
        m[1]: n
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if (m := re.match(r"\s*- id: (\S+)", line))
    }


def passing(n: int):
    return run(*[question(f"Q{i:03d}", metrics=[metric("hit_at_k", 1.0)]) for i in range(n)])


def regressed(n: int):
    return run(
        *[
            question(
                f"Q{i:03d}", "fail", metrics=[metric("hit_at_k", 0.0).model_copy(update={"reason": REASON})]
            )
            for i in range(n)
        ]
    )


def act(fake: FakeGitHubServer, workspace: Path, head, baseline, *, artifact: str | None = None):
    if baseline is not None or artifact is not None:
        fake.add_baseline_artifact(
            {"results.json": artifact if artifact is not None else baseline.model_dump_json()}
        )
    settings = Settings(
        event_name="pull_request",
        event=PR_EVENT,
        repository="acme/rag",
        ref="refs/pull/7/merge",
        sha="f" * 40,
        run_id="1",
        workspace=workspace,
        step_summary=workspace / "summary.md",
        github_output=workspace / "output.txt",
        github_token=Secret("t0ken"),
    )
    github = connect(fake.url, Secret("t0ken"), "acme/rag", seconds_between_requests=0)
    stream = io.StringIO()
    runner = Runner(
        step_summary=settings.step_summary,
        github_output=settings.github_output,
        in_actions=True,
        stream=stream,
    )

    def evaluate(project, output, cache_baseline, full, context, confirm_each):
        save_results(output, head)
        return head

    return action(settings, github, runner, evaluate=evaluate), stream.getvalue()


def test_every_regression_is_in_the_check_run_at_its_line_in_batches_of_50_and_ten_on_the_log(fake, tmp_path):
    workspace = project_with(tmp_path, 120)
    code, out = act(fake, workspace, regressed(120), passing(120))

    assert code == EXIT_REGRESSION
    lines = id_lines(workspace / "eval" / "questions.yml")
    logged = re.findall(
        r"^::error file=eval/questions\.yml,line=(\d+),title=(Q\d+) — regression::hit@k 1.00→0.00", out, re.M
    )
    assert len(logged) == 10 and all(lines[qid] == int(line) for line, qid in logged)
    assert "110 more annotation(s) in the 'rag-ci gate' check run" in out
    [check] = fake.check_runs.values()
    assert (
        check["name"] == "rag-ci gate" and check["head_sha"] == "e" * 40 and check["conclusion"] == "failure"
    )
    assert [(a["path"], a["start_line"], a["title"]) for a in check["annotations"]] == [
        ("eval/questions.yml", lines[f"Q{i:03d}"], f"Q{i:03d} — regression") for i in range(120)
    ]
    assert check["requests"] == 3  # 50 with the POST, 50 + 20 in two PATCHes
    assert fake.routes()[-3:] == [
        "POST /repos/acme/rag/check-runs",
        "PATCH /repos/acme/rag/check-runs/{n}",
        "PATCH /repos/acme/rag/check-runs/{n}",
    ]


def test_the_job_summary_holds_every_regression_row_the_comment_had_to_cut(fake, tmp_path):
    workspace = project_with(tmp_path, 400)
    code, _ = act(fake, workspace, regressed(400), passing(400))

    assert code == EXIT_REGRESSION
    comment = fake.comments[7][0]["body"]
    summary = (workspace / "summary.md").read_text()

    def rows(text: str) -> set[str]:
        return set(re.findall(r"^\| (Q\d{3})\b", text, re.M))

    assert len(rows(comment)) < 400  # the comment (60,000 characters) cut rows ...
    assert rows(summary) == {f"Q{i:03d}" for i in range(400)}  # ... the job summary has them all
    assert len(summary.encode()) <= 1024 * 1024


def test_a_token_without_checks_write_is_one_quiet_line_and_the_annotations_stay_on_the_log(fake, tmp_path):
    workspace = project_with(tmp_path, 3)
    fake.checks_forbidden = True
    code, out = act(fake, workspace, regressed(3), passing(3))

    assert code == EXIT_REGRESSION
    assert "[rag-ci] no check run: the token lacks checks: write" in out
    assert "::warning" not in out and not fake.check_runs
    assert (
        len(re.findall(r"^::error file=eval/questions\.yml,line=\d+,title=Q00\d — regression::", out, re.M))
        == 3
    )


def test_a_changed_cited_document_is_annotated_at_the_document(fake, tmp_path):
    workspace = project_with(tmp_path, 2, corpus_path="docs/a")
    (workspace / "docs" / "a").mkdir(parents=True)
    (workspace / "docs" / "a" / "x.md").write_text("The delay is 12 ms.\n")
    base = passing(2)
    base = base.model_copy(
        update={
            "questions": [
                q.model_copy(update={"source_fingerprints": {"a/x.md": "old"}}) for q in base.questions
            ]
        }
    )
    head = regressed(1).questions + [question("Q001", metrics=[metric("hit_at_k", 1.0)])]
    head = run(*[q.model_copy(update={"source_fingerprints": {"a/x.md": "new"}}) for q in head])
    code, out = act(fake, workspace, head, base)

    assert code == EXIT_REGRESSION
    [warning] = re.findall(r"^::warning file=docs/a/x\.md,title=a/x\.md — source changed::(.*)$", out, re.M)
    assert (
        "cited by Q000" in warning
        and "failing now: Q000" in warning
        and "update the reference or the document" in warning
    )
    [check] = fake.check_runs.values()
    # Its changed line is not known (the baseline's commit has no copy to diff with): a finding about
    # the file, named in the check run's summary, never an annotation at line 1, outside the diff.
    assert [a for a in check["annotations"] if a["path"] == "docs/a/x.md"] == []
    summary = check["output"]["summary"]
    assert (
        "About whole files:\n\n- `docs/a/x.md`: a/x.md changed since the baseline; cited by Q000" in summary
    )


def test_a_bootstrap_and_a_run_that_could_not_evaluate_still_get_the_check_run(fake, tmp_path):
    # Branch protection that requires `rag-ci gate` must never wait for a check that never comes.
    workspace = project_with(tmp_path, 2)
    code, _ = act(fake, workspace, passing(2), None)
    assert code == 0
    [bootstrap] = fake.check_runs.values()
    # the comment's headline
    assert (
        bootstrap["conclusion"] == "success"
        and bootstrap["output"]["title"] == "rag-ci: 🟡 no baseline to compare with"
    )

    fake.check_runs.clear()
    code, _ = act(fake, workspace, passing(2), None, artifact="{not json")
    assert code == 2
    [broken] = fake.check_runs.values()
    assert (
        broken["conclusion"] == "failure" and broken["output"]["title"] == "rag-ci: The baseline is unusable"
    )  # the cause, not "not evaluated"
    assert "```" in broken["output"]["summary"]  # the cause, fenced: inert markdown


def _cited_document(workspace: Path, text: str) -> None:
    (workspace / "docs" / "a").mkdir(parents=True)
    (workspace / "docs" / "a" / "x.md").write_text(text)


def _citing(result, fingerprint: str):
    return result.model_copy(
        update={
            "questions": [
                q.model_copy(update={"source_fingerprints": {"a/x.md": fingerprint}})
                for q in result.questions
            ]
        }
    )


def test_a_changed_cited_document_is_annotated_at_its_changed_line_and_each_question_names_its_comment(
    fake, tmp_path
):
    workspace = project_with(tmp_path, 2, corpus_path="docs/a")
    _cited_document(workspace, "# Delay\n\nSent every second frame.\nThe delay is 12 ms.\nEnd.\n")
    # the baseline's commit
    fake.add_files_at(
        "abc", {"docs/a/x.md": "# Delay\n\nSent every second frame.\nThe delay is 10 ms.\nEnd.\n"}
    )
    head = run(*regressed(1).questions, question("Q001", metrics=[metric("hit_at_k", 1.0)]))
    code, out = act(fake, workspace, _citing(head, "new"), _citing(passing(2), "old"))

    assert code == EXIT_REGRESSION
    [check] = fake.check_runs.values()
    at = [(a["path"], a["start_line"]) for a in check["annotations"] if a["annotation_level"] == "warning"]
    assert at == [("docs/a/x.md", 4)]  # today: line 1, outside the diff
    [q000] = [a for a in check["annotations"] if a["title"] == "Q000 — regression"]
    assert q000["message"].endswith("Its row: " + fake.comments[7][0]["html_url"])


def test_a_changed_document_cited_only_by_an_already_failing_question_is_annotated(fake, tmp_path):
    workspace = project_with(tmp_path, 2, corpus_path="docs/a")
    _cited_document(workspace, "The delay is 12 ms.\n")
    failing = run(*regressed(1).questions, question("Q001", metrics=[metric("hit_at_k", 1.0)]))
    code, out = act(fake, workspace, _citing(failing, "new"), _citing(failing, "old"))

    assert code == 0, out
    [warning] = re.findall(r"^::warning file=docs/a/x\.md.*source changed::(.*)$", out, re.M)  # today: none
    assert "cited by Q000" in warning and "failing now: Q000" in warning
