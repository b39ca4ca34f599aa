"""An incompatible baseline's message says what differs and how to re-baseline."""

from rag_ci.core.fingerprint_diff import describe_fingerprint_difference
from rag_ci.core.results import JudgeFingerprint


def fp(**changes):
    base = dict(provider="anthropic", model="claude-haiku-4-5-20251001", temperature=0.0, deepeval_version="4.3.1",
                metrics={"faithfulness": {"threshold": 0.7}, "correctness": {"threshold": 1.0, "criteria": None}},
                prompt_hash="p1")
    return JudgeFingerprint(**{**base, **changes})


def test_equal_fingerprints_have_no_difference():
    assert describe_fingerprint_difference(fp(), fp()) == ""


def test_names_each_difference_with_both_values_and_how_to_rebaseline():
    message = describe_fingerprint_difference(
        fp(), fp(model="gpt-4.1-mini-2025-04-14", provider="openai", prompt_hash="p2",
                 metrics={"faithfulness": {"threshold": 0.8}, "correctness": {"threshold": 1.0, "criteria": None}}))
    assert "judge model: baseline 'claude-haiku-4-5-20251001', this run 'gpt-4.1-mini-2025-04-14'" in message
    assert "judge provider: baseline 'anthropic', this run 'openai'" in message
    assert "prompt templates" in message
    assert "metric faithfulness.threshold: baseline 0.7, this run 0.8" in message
    assert "rebaseline: true" in message


def test_a_metric_added_or_removed_is_named():
    message = describe_fingerprint_difference(fp(), fp(metrics={"faithfulness": {"threshold": 0.7}}))
    assert "metric correctness: judged on the baseline, not now" in message
