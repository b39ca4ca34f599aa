"""action(): which mode an event gets, and how each outcome maps to the exit code.

The runs are canned (no RAG is started); GitHub is FakeGitHubServer.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from builders import metric, question, run
from fakes.fake_github import FakeGitHubServer
from rag_ci.action.baseline import ACTIONS_REBASELINE_HINT, in_actions_words
from rag_ci.action.entry import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION, action, resolve_mode
from rag_ci.action.modes import PLANS, BaselineUse, Mode
from rag_ci.action.settings import Secret, Settings
from rag_ci.core.comparison.compare import REBASELINE_HINT
from rag_ci.core.comparison.policy import policy_of
from rag_ci.core.config import parse_config
from rag_ci.errors import RagCiError
from rag_ci.files.results_file import save_results
from rag_ci.github.client import connect
from rag_ci.github.comments import COMMENT_MARKER
from rag_ci.github.workflow import Runner

PASSING = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]), question("Q2", metrics=[metric("hit_at_k", 1.0)])
)
REGRESSED = run(
    question("Q1", metrics=[metric("hit_at_k", 1.0)]),
    question("Q2", "fail", metrics=[metric("hit_at_k", 0.0)]),
)


def settings_for(event_name: str, event: dict, workspace: Path, **inputs) -> Settings:
    ref = inputs.pop("ref", "refs/heads/main" if event_name != "pull_request" else "refs/pull/7/merge")
    return Settings(
        event_name=event_name,
        event=event,
        repository="acme/rag",
        ref=ref,
        sha="f" * 40,
        run_id="1",
        workspace=workspace,
        step_summary=workspace / "summary.md",
        github_output=workspace / "output.txt",
        github_token=Secret("t0ken"),
        **inputs,
    )


PR_EVENT = {
    "pull_request": {
        "number": 7,
        "head": {"sha": "h" * 40, "repo": {"full_name": "acme/rag"}},
        "base": {"ref": "main"},
    },
    "repository": {"default_branch": "main"},
}
PUSH_EVENT = {"ref": "refs/heads/main", "repository": {"default_branch": "main"}}


@pytest.mark.parametrize(
    "event_name,ref,mode",
    [
        ("pull_request", "refs/pull/7/merge", "pr"),
        ("push", "refs/heads/main", "baseline"),
        ("push", "refs/heads/release/1.x", "baseline"),  # a release branch's own baseline
        ("push", "refs/tags/v1.0.0", None),  # a tag never makes a baseline
        ("workflow_dispatch", "refs/heads/main", "full"),
        ("schedule", "refs/heads/main", "full"),
        ("workflow_run", "refs/heads/main", "comment"),
    ],
)
def test_auto_mode_follows_the_event(tmp_path, event_name, ref, mode):
    assert resolve_mode(settings_for(event_name, PUSH_EVENT, tmp_path, ref=ref)) == mode


def test_pull_request_target_is_refused_unless_asked_for_explicitly(tmp_path):
    with pytest.raises(RagCiError, match="pull_request_target"):
        resolve_mode(settings_for("pull_request_target", PR_EVENT, tmp_path))
    assert resolve_mode(settings_for("pull_request_target", PR_EVENT, tmp_path, mode="pr")) == "pr"


@pytest.fixture
def fake():
    with FakeGitHubServer(token="t0ken") as server:
        server.graph.line("a" * 40, "f" * 40, branch="main")  # the artifacts' commit, then this run's
        yield server


@pytest.fixture
def project(tiny_project, tmp_path) -> Path:
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}")
    return tmp_path


def act(fake, settings: Settings, head, *, baseline=None):
    """Run action() with `head` as the run's result and `baseline` as main's artifact."""
    if baseline is not None:
        fake.add_baseline_artifact({"results.json": baseline.model_dump_json()})
    github = connect(fake.url, Secret("t0ken"), "acme/rag", seconds_between_requests=0)
    stream = io.StringIO()
    runner = Runner(
        step_summary=settings.step_summary,
        github_output=settings.github_output,
        in_actions=True,
        stream=stream,
    )
    seen = {}

    def evaluate(project, output, cache_baseline, full, context, confirm_each):
        seen.update(cache_baseline=cache_baseline, full=full, context=context, config=project.config)
        save_results(output, head)
        return head

    code = action(settings, github, runner, evaluate=evaluate)
    return code, stream.getvalue(), seen


def id_line(project: Path, qid: str) -> int:
    """The 1-based line of `- id: <qid>` in the project's questions.yml."""
    lines = (project / "questions.yml").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip() == f"- id: {qid}")


def test_regressions_fail_the_pr_and_the_baseline_feeds_the_verdict_cache(fake, project):
    code, out, seen = act(fake, settings_for("pull_request", PR_EVENT, project), REGRESSED, baseline=PASSING)
    assert code == EXIT_REGRESSION
    assert seen["cache_baseline"] == PASSING and seen["full"] is False
    assert seen["context"].pr_number == 7 and seen["context"].git_sha == "f" * 40
    # At the question's `- id:` line of questions.yml (relative to the workspace), titled by id and kind.
    assert (
        f"::error file=questions.yml,line={id_line(project, 'Q2')},title=Q2 — regression::hit@k 1.00→0.00 (≥ 0.50)"
        in out
    )


def test_with_fail_on_regression_false_the_pr_reports_but_passes(fake, project):
    settings = settings_for("pull_request", PR_EVENT, project, fail_on_regression=False)
    code, out, _ = act(fake, settings, REGRESSED, baseline=PASSING)
    assert code == EXIT_PASS
    assert "not failing because the gate is off" in out
    body = fake.comments[7][0]["body"]
    assert COMMENT_MARKER in body and "(gate disabled)" in body
    assert "regressions<<" in (project / "output.txt").read_text()


def test_a_full_run_ignores_the_cache_and_fails_on_drift(fake, project):
    code, _, seen = act(
        fake, settings_for("workflow_dispatch", PUSH_EVENT, project, mode="full"), REGRESSED, baseline=PASSING
    )
    assert code == EXIT_REGRESSION
    # The engine gets the baseline to re-ask flipped questions against; `full` turns its cache off.
    assert seen["full"] is True and seen["cache_baseline"] == PASSING
    assert fake.comments == {}  # posts nothing
    assert len((fake.file_on_branch("rag-ci-data", "eval_history.jsonl") or b"").splitlines()) == 1


def test_a_full_run_against_an_incompatible_baseline_stops_for_a_human(fake, project):
    other = run(question("Q1", metrics=[metric("hit_at_k", 1.0)]), thresholds={"hit_at_k": 0.5})
    code, out, _ = act(fake, settings_for("schedule", {"schedule": "x"}, project), PASSING, baseline=other)
    assert code == EXIT_ERROR
    assert "rebaseline" in (project / "summary.md").read_text()


def test_a_baseline_of_another_schema_version_fails_the_pr_before_running(fake, project):
    data = json.loads(PASSING.model_dump_json())
    data["meta"]["schema_version"] = 999
    fake.add_baseline_artifact({"results.json": json.dumps(data)})
    code, out, seen = act(fake, settings_for("pull_request", PR_EVENT, project), PASSING)
    assert code == EXIT_ERROR and seen == {}
    assert "schema_version 999" in out and "rebaseline: true" in (project / "summary.md").read_text()


def test_the_pr_runs_under_the_baselines_policy_and_its_own_changes_are_previewed(fake, project):
    (project / "rag-ci.yml").write_text(
        (project / "rag-ci.yml").read_text() + "gate: {fail_on: never}\nmetrics: {hit_at_k: {k: 2}}\n"
    )
    main_policy = policy_of(
        parse_config(
            "target: {kind: python, entry: 'tiny_rag:answer'}\nmetrics: {hit_at_k: {k: 5}}\n", "main.yml"
        )
    )
    baseline = run(*PASSING.questions, policy=main_policy)
    head = run(*REGRESSED.questions, policy=main_policy)
    code, _, seen = act(fake, settings_for("pull_request", PR_EVENT, project), head, baseline=baseline)
    assert code == EXIT_REGRESSION
    assert (
        seen["config"].gate.fail_on == "any_regression" and seen["config"].metric_configs()["hit_at_k"].k == 5
    )
    body = fake.comments[7][0]["body"].replace("\\", "")  # markdown escapes aside
    assert "This PR changes the gate:** gate.fail_on any_regression → never; hit_at_k.k 5 → 2" in body


def test_an_invalid_config_is_an_error_with_the_reason_in_the_summary(fake, tmp_path):
    (tmp_path / "rag-ci.yml").write_text("target: {kind: nonsense}\n")
    code, out, _ = act(fake, settings_for("pull_request", PR_EVENT, tmp_path), PASSING)
    assert code == EXIT_ERROR
    # At the file and line the validation names, relative to the workspace (not one annotation without a place).
    assert "::error file=rag-ci.yml,line=1,title=rag-ci%3A invalid input::target: " in out
    assert "::error title=rag-ci::" not in out
    [check] = fake.check_runs.values()
    assert check["conclusion"] == "failure" and check["annotations"][0]["path"] == "rag-ci.yml"
    assert "## rag-ci: error" in (tmp_path / "summary.md").read_text()
    assert "verdict<<" in (tmp_path / "output.txt").read_text()


def test_an_unreachable_github_is_an_error_not_a_traceback(project):
    settings = settings_for("pull_request", PR_EVENT, project, api_url="http://127.0.0.1:9")
    github = connect("http://127.0.0.1:9", Secret("t0ken"), "acme/rag", seconds_between_requests=0, retries=0)
    stream = io.StringIO()
    runner = Runner(step_summary=settings.step_summary, github_output=None, in_actions=True, stream=stream)
    code = action(
        settings, github, runner, evaluate=lambda *a: pytest.fail("must not run without a baseline answer")
    )
    assert code == EXIT_ERROR
    assert "could not list the artifacts named 'rag-ci-baseline'" in stream.getvalue()


def test_a_comment_artifact_without_the_marker_is_not_posted(fake, tmp_path):
    artifact = fake.add_baseline_artifact(
        {"comment.md": "hello @everyone"}, name="rag-ci-comment", branch="feature", event="pull_request"
    )
    event = {
        "workflow_run": {
            "id": artifact.run_id,
            "event": "pull_request",
            "pull_requests": [{"number": 7}],
            "head_branch": "feature",
        }
    }
    code, out, _ = act(fake, settings_for("workflow_run", event, tmp_path), PASSING)
    assert code == EXIT_ERROR and "marker" in out
    assert fake.comments == {}


def test_on_main_a_missing_artifact_permission_only_costs_the_cache(fake, project):
    fake.inject("GET", "/repos/acme/rag/actions/artifacts", 403, "Resource not accessible by integration")
    code, out, seen = act(fake, settings_for("push", PUSH_EVENT, project), PASSING)
    assert code == EXIT_PASS and seen["cache_baseline"] is None
    assert "previous baseline not used as verdict cache" in out and "actions: read" in out


def broken(
    result, reason="2/2 questions errored (100%, above gate.max_error_rate 20%); most common error (2×): boom"
):
    return result.model_copy(update={"meta": result.meta.model_copy(update={"broken": reason})})


ALL_ERRORS = broken(run(question("Q1", "error"), question("Q2", "error")))


def history_lines(fake) -> list[bytes]:
    return (fake.file_on_branch("rag-ci-data", "eval_history.jsonl") or b"").splitlines()


def test_a_broken_pr_run_exits_2_with_the_cause_in_the_comment_not_as_regressions(fake, project):
    code, out, _ = act(fake, settings_for("pull_request", PR_EVENT, project), ALL_ERRORS, baseline=PASSING)
    assert code == EXIT_ERROR
    body = fake.comments[7][0]["body"]
    assert "broken run: not a result" in body and "2/2 questions errored" in body
    assert "regression" not in body.split("\n", 2)[1]  # the headline speaks of no regression
    assert "::error title=rag-ci%3A broken run::" in out and "RAG regression" not in out
    assert (
        "verdict<<" in (project / "output.txt").read_text()
        and "broken" in (project / "output.txt").read_text()
    )


@pytest.mark.parametrize(
    "event_name,event,inputs", [("push", PUSH_EVENT, {}), ("workflow_dispatch", PUSH_EVENT, {"mode": "full"})]
)
def test_a_broken_run_on_main_exits_2_and_is_not_a_history_line(fake, project, event_name, event, inputs):
    code, out, _ = act(fake, settings_for(event_name, event, project, **inputs), ALL_ERRORS, baseline=PASSING)
    assert code == EXIT_ERROR  # the workflow's upload step does not run after a failed step
    assert history_lines(fake) == []
    assert "not uploaded as the baseline" in (project / "summary.md").read_text()


def test_a_broken_baseline_artifact_is_never_compared_with(fake, project):
    code, out, _ = act(
        fake, settings_for("pull_request", PR_EVENT, project), REGRESSED, baseline=broken(PASSING)
    )
    assert code == EXIT_ERROR  # an unusable baseline, like a corrupt one
    assert "is a broken run, not a result" in (project / "summary.md").read_text()
    [comment] = fake.comments[7]  # no verdict: the comment says the push was not evaluated, and why
    assert (
        comment["body"].splitlines()[1].startswith("## rag-ci: ⛔ not evaluated — The baseline is unusable")
    )


def test_a_baseline_run_keeps_the_last_known_good_verdict_of_the_questions_it_errored_on(fake, project):
    outage = run(question("Q1", metrics=[metric("hit_at_k", 1.0)]), question("Q2", "error"), sha="f" * 40)
    code, out, _ = act(fake, settings_for("push", PUSH_EVENT, project), outage, baseline=PASSING)
    assert code == EXIT_PASS
    saved = json.loads((project / "rag-ci-output" / "results.json").read_text())
    q1, q2 = saved["questions"]
    assert q1["carried"] is None
    assert q2["carried"]["verdict"] == "pass" and q2["carried"]["from_sha"] == PASSING.meta.git_sha
    assert "kept the last known good verdict of 1 errored question(s): Q2" in out
    assert len(history_lines(fake)) == 1


def test_worse_questions_fail_the_pr_are_annotated_and_counted(fake, project):
    base = run(question("Q1", "fail", metrics=[metric("hit_at_k", 1.0), metric("keyword_coverage", 0.1)]))
    head = run(question("Q1", "fail", metrics=[metric("hit_at_k", 0.0), metric("keyword_coverage", 0.1)]))
    code, out, _ = act(fake, settings_for("pull_request", PR_EVENT, project), head, baseline=base)
    assert code == EXIT_REGRESSION
    assert (
        f"::error file=questions.yml,line={id_line(project, 'Q1')},title=Q1 — worse::hit@k 1.00→0.00" in out
    )
    assert "### Worse (1): already failing, now worse" in fake.comments[7][0]["body"]
    assert "worse<<" in (project / "output.txt").read_text()


def test_rebaseline_is_a_mode_of_its_own_in_the_table(tmp_path):
    assert (
        resolve_mode(settings_for("workflow_dispatch", PUSH_EVENT, tmp_path, rebaseline=True)) == "rebaseline"
    )
    plan = PLANS[Mode.REBASELINE]
    assert plan.baseline is BaselineUse.NONE and not plan.gate.compare and plan.produces_baseline
    assert [mode for mode, p in PLANS.items() if p.comment] == [Mode.PR]


FAKE_JUDGE = "judge: {provider: fake, model: scripted}"


@pytest.mark.parametrize(
    "event_name,inputs",
    [("push", {}), ("workflow_dispatch", {"mode": "full"}), ("workflow_dispatch", {"rebaseline": True})],
)
def test_a_run_that_may_become_the_baseline_refuses_the_fake_judge_before_asking_anything(
    fake, tiny_project, tmp_path, event_name, inputs
):
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}", extra_yaml=FAKE_JUDGE)
    code, out, seen = act(
        fake, settings_for(event_name, PUSH_EVENT, tmp_path, **inputs), PASSING, baseline=PASSING
    )
    assert code == EXIT_ERROR
    assert seen == {}  # no question was asked
    assert "its judge is `fake`" in out and "its judge is `fake`" in (tmp_path / "summary.md").read_text()
    assert history_lines(fake) == [] and not (tmp_path / "rag-ci-output" / "results.json").exists()


def test_a_pull_request_may_dry_run_with_the_fake_judge(fake, tiny_project, tmp_path):
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}", extra_yaml=FAKE_JUDGE)
    # no baseline: bootstrap
    code, out, seen = act(fake, settings_for("pull_request", PR_EVENT, tmp_path), PASSING)
    assert code == EXIT_PASS and seen["config"].judge.provider == "fake"
    assert "judge is `fake`" not in out


def test_the_cores_rebaseline_hint_names_no_workflow_and_the_action_tells_it_the_github_way():
    assert "workflow_dispatch" not in REBASELINE_HINT
    said = in_actions_words(f"The baseline cannot be compared with this run:\n  - x\n{REBASELINE_HINT}")
    assert (
        said.endswith(ACTIONS_REBASELINE_HINT)
        and "`workflow_dispatch`" in said
        and "`rebaseline: true`" in said
    )


def test_a_pull_request_is_never_gated_by_a_baseline_the_fake_judge_made(fake, project):
    from rag_ci.core.results import JudgeFingerprint

    dry_run = PASSING.model_copy(deep=True)
    dry_run.meta.judge = JudgeFingerprint(
        provider="fake",
        model="rag-ci-fake-judge-1",
        temperature=0.0,
        deepeval_version="4.3.1",
        metrics={},
        prompt_hash="p",
    )
    code, out, seen = act(fake, settings_for("pull_request", PR_EVENT, project), PASSING, baseline=dry_run)
    assert code == EXIT_ERROR and "judged by the fake judge" in out
    assert seen == {}  # refused before the RAG was asked anything


@pytest.mark.parametrize(
    "event_name,inputs",
    [("push", {}), ("workflow_dispatch", {"rebaseline": True})],
    ids=["baseline", "rebaseline"],
)
def test_a_run_that_makes_the_baseline_is_headed_as_the_new_baseline(
    fake, tiny_project, tmp_path, event_name, inputs
):
    """Issue 55: a re-baseline run's report was headed "🟡 no baseline to compare with"."""
    tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}")
    code, _, _ = act(
        fake, settings_for(event_name, PUSH_EVENT, tmp_path, **inputs), PASSING, baseline=PASSING
    )
    assert code == EXIT_PASS
    summary = (tmp_path / "summary.md").read_text()
    assert "## rag-ci: 📌 new baseline: " in summary and "no baseline to compare with" not in summary
