"""The action states the judge's calibration, gates on it when asked, and leaves an audit sample.

The runs are canned (no RAG is started); GitHub is FakeGitHubServer.
"""

from __future__ import annotations

from datetime import UTC, datetime

from test_github_action_modes import PR_EVENT, PUSH_EVENT, act, fake, project, settings_for  # noqa: F401  (fixtures)

from builders import metric, question, run
from rag_ci.action.entry import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION
from rag_ci.core.comparison.history import calibration_line, dump_line
from rag_ci.core.results import JudgeFingerprint
from rag_ci.core.review.calibration import parse_label_sheet

JUDGE = JudgeFingerprint(
    provider="openai",
    model="gpt-4o-mini-2024-07-18",
    temperature=0.0,
    deepeval_version="3",
    metrics={"correctness": {"threshold": 1.0}},
    prompt_hash="p",
)


def judged(*verdicts: bool):
    return run(
        *[
            question(
                f"Q{i}",
                "pass" if ok else "fail",
                corpora=("a",),
                metrics=[
                    metric("hit_at_k", 1.0),
                    metric("correctness", 1.0 if ok else 0.0, threshold=1.0, kind="judge"),
                ],
            )
            for i, ok in enumerate(verdicts, start=1)
        ],
        judge=JUDGE,
    )


def calibrated_history(kappa=0.82, n=48) -> bytes:
    today = datetime.now(UTC).date().isoformat()
    return (
        dump_line(
            calibration_line(
                judge_digest=JUDGE.digest(),
                judge="openai:x",
                metric="correctness",
                n=n,
                agreement=0.9,
                kappa=kappa,
                date=today,
                labellers=2,
            )
        )
        + "\n"
    ).encode()


def test_the_pr_comment_warns_that_an_uncalibrated_judge_decided(fake, project):
    code, _, _ = act(
        fake, settings_for("pull_request", PR_EVENT, project), judged(True, True), baseline=judged(True, True)
    )
    assert code == EXIT_PASS
    body = fake.comments[7][0]["body"]
    assert "⚠️ correctness judge not calibrated: no human labels for this judge fingerprint" in body


def test_the_pr_comment_states_the_calibration_recorded_on_the_data_branch(fake, project):
    fake.branches["rag-ci-data"] = {"eval_history.jsonl": calibrated_history()}
    act(
        fake, settings_for("pull_request", PR_EVENT, project), judged(True, True), baseline=judged(True, True)
    )
    body = fake.comments[7][0]["body"]
    today = datetime.now(UTC).date().isoformat()
    assert f"✅ correctness judge calibrated on 48 labels, kappa 0.82 ({today})" in body
    assert (
        f"calibrated on 48 labels, kappa 0.82 ({today})"
        in (project / "rag-ci-output" / "report.html").read_text()
    )


def test_require_calibration_fails_a_full_run_whose_judge_is_not_calibrated_with_exit_2(fake, project):
    (project / "rag-ci.yml").write_text(
        (project / "rag-ci.yml").read_text() + "gate: {require_calibration: true}\n"
    )
    code, out, _ = act(
        fake,
        settings_for("workflow_dispatch", PUSH_EVENT, project, mode="full"),
        judged(True, True),
        baseline=judged(True, True),
    )
    assert code == EXIT_ERROR
    assert (
        "judge not calibrated" in out and "gate.require_calibration" in (project / "summary.md").read_text()
    )


def test_require_calibration_passes_a_calibrated_judge_and_a_weak_one_fails(fake, project):
    (project / "rag-ci.yml").write_text(
        (project / "rag-ci.yml").read_text() + "gate: {require_calibration: true}\n"
    )
    fake.branches["rag-ci-data"] = {"eval_history.jsonl": calibrated_history()}
    settings = settings_for("workflow_dispatch", PUSH_EVENT, project, mode="full")
    assert act(fake, settings, judged(True, True), baseline=judged(True, True))[0] == EXIT_PASS
    fake.branches["rag-ci-data"] = {"eval_history.jsonl": calibrated_history(kappa=0.3)}
    assert act(fake, settings, judged(True, True), baseline=judged(True, True))[0] == EXIT_ERROR


def test_without_require_calibration_a_regression_still_exits_1(fake, project):
    code, _, _ = act(
        fake,
        settings_for("workflow_dispatch", PUSH_EVENT, project, mode="full"),
        judged(True, False),
        baseline=judged(True, True),
    )
    assert code == EXIT_REGRESSION


def test_a_full_run_writes_the_audit_sample_into_the_output_folder_and_links_it(fake, project):
    base, head = judged(*[True] * 30), judged(*([True] * 29 + [False]))
    code, _, _ = act(
        fake, settings_for("workflow_dispatch", PUSH_EVENT, project, mode="full"), head, baseline=base
    )
    assert code == EXIT_REGRESSION
    audit = project / "rag-ci-output" / "audit"
    sheet = parse_label_sheet((audit / "labels.yml").read_text(), "labels.yml")
    assert "Q30" in sheet.unlabelled  # this run's regression is always in the sample
    assert (audit / "audit.html").is_file()
    summary = (project / "summary.md").read_text()
    assert "### Audit sample" in summary and "audit/audit.html" in summary


def test_a_pr_run_writes_no_audit_sample(fake, project):
    act(fake, settings_for("pull_request", PR_EVENT, project), judged(True), baseline=judged(True))
    assert not (project / "rag-ci-output" / "audit").exists()
