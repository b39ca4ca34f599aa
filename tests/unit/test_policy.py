"""The gate policy: recorded from a config, pinned to the baseline's, the PR's changes described."""

import pytest

from rag_ci.core.comparison.policy import apply_policy, pin_to_baseline, policy_changes, policy_of, redact_url
from rag_ci.core.config import parse_config
from rag_ci.core.results import RunMeta

MAIN = """
target: {kind: python, entry: "rag:answer"}
judge: {provider: openai-compatible, model: Qwen/Qwen2.5-7B-Instruct, base_url: "http://judge:8000/v1"}
metrics:
  hit_at_k: {k: 5}
  keyword_coverage: {threshold: 0.6}
  correctness: {}
"""


def config(text: str = MAIN, **replace: str):
    for old, new in replace.items():
        text = text.replace(old, new)
    return parse_config(text, "rag-ci.yml")


def meta_of(cfg, *, record_policy: bool = True) -> RunMeta:
    return RunMeta(
        rag_ci_version="t",
        started_at="2026-01-01",
        question_set_version=1,
        question_set_hash="q",
        config_fingerprint=cfg.fingerprint(),
        target_kind="python",
        metric_thresholds=cfg.thresholds(),
        policy=policy_of(cfg) if record_policy else None,
    )


def test_the_recorded_policy_holds_every_metric_parameter_the_gate_and_the_judge():
    policy = policy_of(config())
    assert policy.metrics["hit_at_k"] == {"threshold": 1.0, "k": 5, "criteria": None}
    assert policy.metrics["correctness"]["threshold"] == 1.0
    assert policy.gate["fail_on"] == "any_regression"
    assert policy.judge["model"] == "Qwen/Qwen2.5-7B-Instruct" and policy.judge["max_wait_s"] == 300


def test_a_base_url_is_recorded_without_credentials_and_the_pr_keeps_its_own_copy():
    secret = config(**{"http://judge:8000/v1": "https://user:pa55@judge:8000/v1?key=abc"})
    assert policy_of(secret).judge["base_url"] == "https://judge:8000/v1"
    assert "pa55" not in policy_of(secret).model_dump_json() and redact_url(None) is None
    assert apply_policy(secret, policy_of(secret)).judge.base_url == "https://user:pa55@judge:8000/v1?key=abc"


def test_a_pr_that_lowers_a_threshold_by_001_is_gated_with_the_baselines_and_the_change_is_previewed():
    pr = config(**{"keyword_coverage: {threshold: 0.6}": "keyword_coverage: {threshold: 0.59}"})
    pinned = pin_to_baseline(pr, meta_of(config()))
    assert pinned.config.metric_configs()["keyword_coverage"].threshold == 0.6
    assert pinned.changes == ("keyword_coverage.threshold 0.6 → 0.59",)
    assert pinned.pinned and pinned.notice is None


def test_gate_fail_on_never_in_the_pr_does_not_switch_the_gate_off():
    pr = config(MAIN + "gate: {fail_on: never}\n")
    pinned = pin_to_baseline(pr, meta_of(config()))
    assert pinned.config.gate.fail_on == "any_regression"
    assert pinned.changes == ("gate.fail_on any_regression → never",)


def test_k_judge_and_metric_set_changes_are_all_pinned_and_listed():
    pr = config(
        **{
            "k: 5": "k: 3",
            "Qwen/Qwen2.5-7B-Instruct": "Qwen/Qwen2.5-72B-Instruct",
            "  correctness: {}\n": "  mrr: {threshold: 0.1}\n",
        }
    )
    pinned = pin_to_baseline(pr, meta_of(config()))
    cfg = pinned.config
    assert cfg.metric_configs()["hit_at_k"].k == 5 and cfg.judge.model == "Qwen/Qwen2.5-7B-Instruct"
    assert set(cfg.metric_configs()) == {"hit_at_k", "keyword_coverage", "correctness"}
    assert pinned.changes == (
        "correctness removed",
        "hit_at_k.k 5 → 3",
        "mrr added",
        "judge.model Qwen/Qwen2.5-7B-Instruct → Qwen/Qwen2.5-72B-Instruct",
    )
    # Target, corpora and questions stay the PR's: only the policy is the baseline's.
    assert cfg.target == pr.target and cfg.questions == pr.questions


def test_an_unchanged_config_pins_to_the_same_policy_with_nothing_to_preview():
    pinned = pin_to_baseline(config(), meta_of(config()))
    assert pinned.changes == () and policy_of(pinned.config) == policy_of(config())


def test_settings_an_older_baseline_did_not_record_are_their_defaults_not_changes_of_the_pr():
    meta = meta_of(config())
    older = meta.policy.model_copy(
        update={
            "gate": {k: v for k, v in meta.policy.gate.items() if k != "max_error_rate"},
            "judge": {k: v for k, v in meta.policy.judge.items() if k != "max_wait_s"},
            "metrics": {
                n: {k: v for k, v in m.items() if k != "criteria"} for n, m in meta.policy.metrics.items()
            },
        }
    )
    pinned = pin_to_baseline(config(), meta.model_copy(update={"policy": older}))
    assert pinned.changes == ()
    lowered = pin_to_baseline(
        config(MAIN + "gate: {max_error_rate: 0.5}\n"), meta.model_copy(update={"policy": older})
    )
    assert lowered.changes == ("gate.max_error_rate 0.2 → 0.5",)


def test_a_baseline_without_a_recorded_policy_pins_its_thresholds_and_the_default_gate_and_says_so():
    old_baseline = meta_of(config(), record_policy=False)
    pr = config(
        MAIN.replace("threshold: 0.6", "threshold: 0.1").replace("k: 5", "k: 3") + "gate: {fail_on: never}\n"
    )
    pinned = pin_to_baseline(pr, old_baseline)
    assert pinned.config.metric_configs()["keyword_coverage"].threshold == 0.6
    assert pinned.config.gate.fail_on == "any_regression"
    assert pinned.config.metric_configs()["hit_at_k"].k == 3  # not recorded: the PR's
    assert not pinned.pinned and "could be pinned" in (pinned.notice or "")
    assert "gate.fail_on any_regression → never" in pinned.changes


def test_policy_changes_name_each_side():
    a, b = policy_of(config()), policy_of(config(**{"threshold: 0.6": "threshold: 0.7"}))
    assert policy_changes(a, b) == ["keyword_coverage.threshold 0.6 → 0.7"]
    assert policy_changes(b, a) == ["keyword_coverage.threshold 0.7 → 0.6"]


# --- Without a baseline: the judge of the base branch --------------------------
EVIL = 'base_url: "http://evil.example/v1", api_key_env: GITHUB_TOKEN'


def test_without_a_baseline_the_judge_endpoint_and_key_variable_come_from_the_base_branch():
    from rag_ci.core.comparison.policy import pin_judge_to_base

    pr = config(MAIN.replace('base_url: "http://judge:8000/v1"', EVIL))
    pinned = pin_judge_to_base(pr, MAIN, "rag-ci.yml at main")
    assert pinned.config.judge.base_url == "http://judge:8000/v1" and pinned.config.judge.api_key_env is None
    assert pinned.notice is None
    assert set(pinned.changes) == {
        "judge.api_key_env none → GITHUB_TOKEN",
        "judge.base_url http://judge:8000/v1 → http://evil.example/v1",
    }
    assert pinned.config.target == pr.target and pinned.config.metrics == pr.metrics  # only the judge


@pytest.mark.parametrize(
    "text, problem, why",
    [
        (None, None, "the base branch has no rag-ci.yml at main"),
        ("judge: [not, a, mapping", None, "rag-ci.yml at main is not a usable config"),
        ("judge: {provider: openai-compatible}\n", None, "rag-ci.yml at main has no usable `judge:`"),
        (None, "HTTP 403 Resource not accessible", "rag-ci.yml at main could not be read (HTTP 403"),
    ],
)
def test_without_a_readable_base_config_the_judge_does_not_run_and_says_why(text, problem, why):
    from rag_ci.core.comparison.policy import pin_judge_to_base

    pinned = pin_judge_to_base(
        config(MAIN.replace('base_url: "http://judge:8000/v1"', EVIL)), text, "rag-ci.yml at main", problem
    )
    assert pinned.config.judge.provider == "none" and not pinned.config.judge_enabled
    assert pinned.notice is not None and why in pinned.notice and "no judge key was used" in pinned.notice


def test_a_keyless_judge_needs_no_base_config_and_a_base_without_judge_switches_the_prs_off():
    from rag_ci.core.comparison.policy import pin_judge_to_base

    keyless = config(
        MAIN.replace(
            'provider: openai-compatible, model: Qwen/Qwen2.5-7B-Instruct, base_url: "http://judge:8000/v1"',
            "provider: none",
        )
    )
    assert pin_judge_to_base(keyless, None, "rag-ci.yml at main").config.judge.provider == "none"
    judge_free_base = "target: {kind: python, entry: 'rag:answer'}\n"
    pinned = pin_judge_to_base(config(), judge_free_base, "rag-ci.yml at main")
    assert (
        pinned.config.judge.provider == "none" and "judge.provider none → openai-compatible" in pinned.changes
    )


def test_the_gate_takes_the_judge_from_the_base_branch_when_the_baseline_recorded_no_policy(tmp_path):
    from builders import question, run
    from rag_ci.files.project import load_project
    from rag_ci.gate import BaseConfig, GateOptions, needs_base_config, pin

    (tmp_path / "q.yml").write_text("version: 1\nquestions:\n  - {id: A, question: q, doc_id: a}\n")
    (tmp_path / "rag-ci.yml").write_text(
        "questions: q.yml\ncorpora: {a: {description: A}}\n"
        + MAIN.replace('base_url: "http://judge:8000/v1"', EVIL)
    )
    project = load_project(tmp_path / "rag-ci.yml")
    reads = []

    def base() -> BaseConfig:
        reads.append(1)
        return BaseConfig("rag-ci.yml at main", text=MAIN)

    def pin_as_a_face(
        project, baseline, options
    ):  # the face reads the base branch's config only when the gate needs it
        return pin(
            project, baseline, options, base() if needs_base_config(project, baseline, options) else None
        )

    for baseline in (None, run(question("A"))):  # no baseline; one from a rag-ci that recorded no policy
        pinned = pin_as_a_face(project, baseline, GateOptions())
        assert pinned.project.config.judge.base_url == "http://judge:8000/v1", baseline
    recorded = run(question("A"), policy=policy_of(config()))
    assert (
        pin_as_a_face(project, recorded, GateOptions()).project.config.judge.base_url
        == "http://judge:8000/v1"
    )
    assert len(reads) == 2  # a baseline with its policy needs no read
    assert (
        pin(project, None, GateOptions(pin_policy=False), base()).project.config.judge.base_url
        == "http://evil.example/v1"
    )
