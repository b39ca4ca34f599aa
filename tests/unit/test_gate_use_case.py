"""rag_ci.gate, the evaluation both faces call: each step of the sequence and each named option.

The run is an in-memory fake (a canned result), the only edge here; `evaluate` below calls the
gate as a face does: prepare, run, decide, and write the run again when verdicts were carried."""

from __future__ import annotations

from datetime import date

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.policy import policy_of
from rag_ci.core.results import JudgeFingerprint
from rag_ci.core.review.accepted import Acceptance
from rag_ci.errors import BrokenRun, RagCiError
from rag_ci.files.project import load_project
from rag_ci.gate import GateOptions, History, Uncompared, compare_runs, decide, prepare

HIT = "hit_at_k"
FAKE_JUDGE = JudgeFingerprint(
    provider="fake",
    model="rag-ci-fake-judge-1",
    temperature=0.0,
    deepeval_version="x",
    metrics={},
    prompt_hash="p",
)


@pytest.fixture
def project(tiny_project):
    return load_project(tiny_project("target: {kind: python, entry: 'tiny_rag:answer'}"))


def passing(qid="Q1", **kw):
    return question(qid, metrics=[metric(HIT, 1.0, 1.0)], **kw)


def failing(qid="Q1", **kw):
    return question(qid, "fail", metrics=[metric(HIT, 0.0, 1.0)], **kw)


class CannedRun:
    """The run the gate is handed: records what it was asked to run, returns `head`."""

    def __init__(self, head):
        self.head, self.asked = head, []

    def __call__(self, pinned):
        self.asked.append(pinned)
        return self.head


def evaluate(
    project,
    baseline,
    run,
    *,
    accepted=(),
    history=History(),
    options=GateOptions(),
    save=lambda _head: None,
    today=None,
):
    """The sequence as a face runs it: prepare → run → decide (→ save the run with its carried verdicts)."""
    pinned = prepare(project, baseline, accepted=accepted, options=options)
    outcome = decide(
        pinned, baseline, run(pinned), accepted=accepted, history=history, options=options, today=today
    )
    if outcome.carried:
        save(outcome.head)
    return outcome


def test_a_regression_fails_with_exit_1_and_a_pass_exits_0(project):
    base = run(passing())
    assert evaluate(project, base, CannedRun(run(failing()))).exit_code == 1
    outcome = evaluate(project, base, CannedRun(run(passing())))
    assert (outcome.verdict, outcome.exit_code) == ("pass", 0)


def test_the_run_is_made_under_the_baselines_policy_and_the_configs_changes_are_previewed(project):
    recorded = policy_of(project.config).model_copy(deep=True)
    recorded.metrics["keyword_coverage"]["threshold"] = (
        0.9  # main gates keywords harder than this PR's config
    )
    base = run(passing(), policy=recorded)
    canned = CannedRun(run(passing()))

    outcome = evaluate(project, base, canned)

    assert canned.asked[0].project.config.metric_configs()["keyword_coverage"].threshold == 0.9
    assert outcome.policy_changes == ("keyword_coverage.threshold 0.9 → 0.6",)
    assert outcome.comparison.policy_changes == outcome.policy_changes


def test_without_pinning_the_config_gates_with_its_own_policy(project):
    recorded = policy_of(project.config).model_copy(deep=True)
    recorded.metrics["keyword_coverage"]["threshold"] = 0.9
    canned = CannedRun(run(passing()))

    outcome = evaluate(
        project, run(passing(), policy=recorded), canned, options=GateOptions(pin_policy=False)
    )

    assert canned.asked[0].project.config.metric_configs()["keyword_coverage"].threshold == 0.6
    assert outcome.policy_changes == ()


def test_an_errored_question_keeps_its_last_good_verdict_and_the_run_is_saved_again(project):
    saved = []
    head = run(question("Q1", "error"), passing("Q2"))
    outcome = evaluate(project, run(passing("Q1"), passing("Q2")), CannedRun(head), save=saved.append)

    assert outcome.carried == ("Q1",)
    assert saved == [outcome.head] and outcome.head.by_id()["Q1"].carried.verdict == "pass"


def test_carrying_forward_is_an_option(project):
    saved = []
    outcome = evaluate(
        project,
        run(passing("Q1"), passing("Q2")),
        CannedRun(run(question("Q1", "error"), passing("Q2"))),
        options=GateOptions(carry_forward=False),
        save=saved.append,
    )
    assert outcome.carried == () and saved == []


def test_no_baseline_is_a_bootstrap_that_passes_with_the_faces_words(project):
    outcome = evaluate(
        project,
        None,
        CannedRun(run(failing())),
        options=GateOptions(bootstrap=Uncompared("bootstrap", "no artifact yet")),
    )
    assert (outcome.verdict, outcome.exit_code, outcome.notice, outcome.comparison) == (
        "bootstrap",
        0,
        "no artifact yet",
        None,
    )


def test_a_run_that_replaces_the_baseline_is_not_compared(project):
    outcome = evaluate(
        project,
        run(passing()),
        CannedRun(run(failing())),
        options=GateOptions(compare=False, uncompared=Uncompared("baseline", "becomes the baseline")),
    )
    assert (outcome.verdict, outcome.exit_code, outcome.comparison) == ("baseline", 0, None)


def test_the_accepted_file_lets_a_named_regression_pass(project):
    head = run(failing())
    entry = Acceptance(id="Q1", question_hash=head.questions[0].question_hash, reason="intended, PR #1")
    outcome = evaluate(project, run(passing()), CannedRun(head), accepted=[entry])
    assert (outcome.verdict, outcome.exit_code) == ("pass", 0)
    assert [a.change.id for a in outcome.comparison.accepted] == ["Q1"]


def test_the_run_is_told_which_questions_the_accepted_file_names(project):
    # An accepted drop must not settle the question: the run confirms each of its judged flips.
    head = run(failing())
    canned = CannedRun(head)
    evaluate(
        project, run(passing()), canned, accepted=[Acceptance(id="Q1", question_hash="0" * 16, reason="r")]
    )
    assert canned.asked[0].confirm_each == frozenset({"Q1"})
    evaluate(project, run(passing()), canned)
    assert canned.asked[1].confirm_each == frozenset()


def test_known_flaky_questions_come_from_the_history(project):
    # Q1 disagreed with itself on main (1 of 2 samples passed): a single failing answer is not evidence.
    history = History.of_text('{"pass_rate": 1.0, "flaky": {"Q1": [1, 2]}}\n')
    outcome = evaluate(project, run(passing()), CannedRun(run(failing())), history=history)
    assert outcome.verdict == "pass" and [f.id for f in outcome.comparison.flaky] == ["Q1"]
    assert evaluate(project, run(passing()), CannedRun(run(failing()))).verdict == "fail"


def test_a_baseline_of_another_schema_is_incompatible_and_said_in_the_faces_words(project):
    base = run(passing())
    base.meta.schema_version = 99  # written by a rag-ci of another results schema
    outcome = evaluate(
        project, base, CannedRun(run(passing())), options=GateOptions(rebaseline_hint="Run rebaseline.")
    )
    assert (outcome.verdict, outcome.exit_code) == ("incompatible", 2)
    assert outcome.notices[-1].startswith("Not compared: ") and outcome.notices[-1].endswith(
        "Run rebaseline."
    )


def test_a_full_run_needs_every_metric_comparable(project):
    base, head = run(passing(), thresholds={HIT: 1.0}), run(passing(), thresholds={HIT: 0.5})
    assert evaluate(project, base, CannedRun(head), options=GateOptions(pin_policy=False)).verdict == "pass"
    strict = evaluate(
        project, base, CannedRun(head), options=GateOptions(pin_policy=False, all_metrics_comparable=True)
    )
    assert (strict.verdict, strict.exit_code) == ("incompatible", 2) and "hit_at_k" in strict.notice


def test_failing_on_never_passes_but_says_the_gate_is_off(project):
    outcome = evaluate(
        project, run(passing()), CannedRun(run(failing())), options=GateOptions(fail_on="never")
    )
    assert (outcome.verdict, outcome.exit_code, outcome.gate_off) == ("pass", 0, True)


def test_a_broken_run_exits_2_and_is_not_compared(project):
    head = run(question("Q1", "error"))
    head.meta.broken = "1/1 questions errored"
    outcome = evaluate(project, run(passing()), CannedRun(head))
    assert (outcome.verdict, outcome.exit_code, outcome.comparison) == ("broken", 2, None)


def test_a_broken_baseline_is_refused_before_the_target_is_asked(project):
    base = run(passing())
    base.meta.broken = "9/10 questions errored"
    canned = CannedRun(run(passing()))
    with pytest.raises(BrokenRun, match="is a broken run"):
        evaluate(project, base, canned)
    assert canned.asked == []


def test_a_baseline_judged_by_the_fake_judge_is_refused_before_the_target_is_asked(project):
    canned = CannedRun(run(passing()))
    with pytest.raises(RagCiError, match="judged by the fake judge"):
        evaluate(project, run(passing(), judge=FAKE_JUDGE), canned)
    assert canned.asked == []
    with pytest.raises(RagCiError, match="judged by the fake judge"):
        compare_runs(run(passing(), judge=FAKE_JUDGE), run(passing()))


def test_a_run_that_may_become_the_baseline_refuses_the_fake_judge(project):
    faked = project.with_judge(
        project.config.judge.model_copy(update={"provider": "fake", "model": "rag-ci-fake-judge-1"})
    )
    canned = CannedRun(run(passing()))
    with pytest.raises(RagCiError, match="may become the baseline"):
        evaluate(faked, None, canned, options=GateOptions(may_become_baseline=True))
    assert canned.asked == []
    assert evaluate(faked, None, canned).verdict == "bootstrap"  # a dry run is fine


def test_a_shard_is_compared_with_its_part_of_the_baseline_only(project):
    from rag_ci.core.questionset.shards import shard_of

    ids = [f"Q{i}" for i in range(8)]
    mine = [qid for qid in ids if shard_of(qid, 2) == 1]
    outcome = evaluate(
        project,
        run(*(passing(q) for q in ids)),
        CannedRun(run(*(passing(q) for q in mine))),
        options=GateOptions(shard=(1, 2)),
    )
    assert outcome.comparison.removed == ()
    whole = evaluate(project, run(*(passing(q) for q in ids)), CannedRun(run(*(passing(q) for q in mine))))
    assert len(whole.comparison.removed) == len(ids) - len(mine)


def test_a_full_run_under_require_calibration_with_no_calibration_is_uncalibrated(project):
    judged = run(
        passing(),
        judge=JudgeFingerprint(
            provider="openai",
            model="gpt-4.1-mini-2025-04-14",
            temperature=0.0,
            deepeval_version="x",
            metrics={"correctness": {}},
            prompt_hash="p",
        ),
    )
    strict = project.config.model_copy(
        update={"gate": project.config.gate.model_copy(update={"require_calibration": True})}
    )
    project = type(project)(project.config_path, strict, project.corpora, project.questions)
    options = GateOptions(compare=False, uncompared=Uncompared("rebaseline"), check_calibration=True)

    outcome = evaluate(
        project,
        None,
        CannedRun(judged),
        history=History.of_text(None),
        options=options,
        today=date(2026, 1, 2),
    )

    assert (outcome.verdict, outcome.exit_code) == (
        "uncalibrated",
        2,
    ) and "gate.require_calibration" in outcome.notice
    assert evaluate(project, None, CannedRun(judged), options=GateOptions(compare=False)).exit_code == 0


def test_a_routing_leak_fails_the_run_without_a_baseline_too():
    """Every question a routing_error, no baseline: was exit 0 ("bootstrap"). A leak always gates."""
    head = run(question("Q1", "routing_error"), question("Q2", "routing_error"))
    outcome = compare_runs(None, head)
    assert outcome.verdict == "fail" and outcome.exit_code == 1
    assert "2 routing leaks" in outcome.notice and "Q1" in outcome.notice
    clean = compare_runs(None, run(passing("Q1")))
    assert clean.verdict == "bootstrap" and clean.exit_code == 0
