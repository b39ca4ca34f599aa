"""rag-ci.yml parsing: targets by kind, metric defaults, and errors with lines."""

import pytest

from rag_ci.core.config import parse_config
from rag_ci.errors import ValidationError

COMMAND = "questions: q.yml\ncorpora: {a: {}}\ntarget:\n  kind: command\n  command: [python, rag.py]\n"


def test_command_target_with_defaults():
    config = parse_config(COMMAND, "rag-ci.yml")
    assert (
        config.target.kind == "command" and config.target.timeout_s == 60 and config.target.concurrency == 8
    )
    assert config.judge.provider == "none"


def test_default_metrics_without_judge_are_judge_free():
    metrics = parse_config(COMMAND, "rag-ci.yml").metric_configs()
    assert set(metrics) == {"hit_at_k", "mrr", "ndcg", "source_recall", "keyword_coverage", "refusal"}
    assert metrics["hit_at_k"].k == 5 and metrics["keyword_coverage"].threshold == 0.6


def test_explicit_metric_keeps_default_threshold_when_not_given():
    config = parse_config(
        COMMAND + "metrics:\n  hit_at_k: {k: 3}\n  keyword_coverage: {threshold: 0.8}\n", "rag-ci.yml"
    )
    metrics = config.metric_configs()
    assert metrics["hit_at_k"].k == 3 and metrics["hit_at_k"].threshold == 1.0
    assert metrics["keyword_coverage"].threshold == 0.8
    assert set(metrics) == {"hit_at_k", "keyword_coverage"}


def test_unknown_metric_is_refused():
    with pytest.raises(ValidationError, match="unknown metric\\(s\\) hits"):
        parse_config(COMMAND + "metrics:\n  hits: {}\n", "rag-ci.yml")


def test_unknown_target_field_names_the_line():
    with pytest.raises(ValidationError) as caught:
        parse_config(COMMAND + "  comand: [x]\n", "rag-ci.yml")
    assert caught.value.problems == ["rag-ci.yml:6: target.comand: unknown field"]


def test_target_concurrency_max_is_refused_as_unknown_since_nothing_reads_it():
    # It looked like a setting of the target's concurrency; only judge.concurrency_max is one.
    with pytest.raises(ValidationError) as caught:
        parse_config(COMMAND + "  concurrency_max: 64\n", "rag-ci.yml")
    assert caught.value.problems == ["rag-ci.yml:6: target.concurrency_max: unknown field"]
    assert (
        parse_config(COMMAND + "judge:\n  provider: fake\n  concurrency_max: 64\n", "x").judge.concurrency_max
        == 64
    )


def test_unknown_target_kind():
    with pytest.raises(ValidationError, match="target"):
        parse_config("corpora: {a: {}}\ntarget:\n  kind: grpc\n", "rag-ci.yml")


def test_judge_needs_a_model():
    with pytest.raises(ValidationError, match="judge.model is required"):
        parse_config(COMMAND + "judge:\n  provider: openai\n", "rag-ci.yml")


def test_fingerprint_changes_with_thresholds():
    a = parse_config(COMMAND, "x").fingerprint()
    b = parse_config(COMMAND + "metrics:\n  hit_at_k: {k: 3}\n", "x").fingerprint()
    assert a != b
