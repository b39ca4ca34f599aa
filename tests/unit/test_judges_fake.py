"""The fake judge (rag_ci.judges.fake): a dry run that never passes for a real judge."""

from __future__ import annotations

import asyncio

import pytest

from rag_ci.core.config import Config
from rag_ci.core.config.cloud import CLOUD_SETTINGS
from rag_ci.errors import RagCiError
from rag_ci.judges.build import build_judge, parse_judge_option, validate_judge
from rag_ci.judges.fake import FAKE_MODEL, FakeChat, FakeJudgeScorer, UnknownPrompt


def config(judge: dict, **target) -> Config:
    return Config.model_validate({"target": {"kind": "python", "entry": "m:f", **target}, "judge": judge})


def test_judge_fake_needs_no_model_and_takes_none():
    assert parse_judge_option("fake") == {
        "provider": "fake",
        "model": None,
        "base_url": None,
        "family": None,
        "prices": None,
        **dict.fromkeys(CLOUD_SETTINGS),
    }
    with pytest.raises(RagCiError, match="'fake' takes no model"):
        parse_judge_option("fake:gpt-4.1-mini-2025-04-14")
    assert config({"provider": "fake"}).judge_enabled


def test_a_real_judge_cannot_claim_the_fake_judges_family():
    # An unknown family name passes as "another family"; this one must not, or a real judge of the
    # generator's own lab could slip past the family check under the fake's name.
    with pytest.raises(RagCiError, match="the fake judge's"):
        validate_judge(
            config(
                {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14", "family": "fake"},
                generator_model="gpt-4o-mini-2024-07-18",
            )
        )


def test_the_fake_judge_skips_the_family_check_and_is_built_without_a_key_or_network():
    # A generator whose family rag-ci cannot tell stops a real judge; the fake has no family to compare.
    unknown = config({"provider": "fake"}, generator_model="house-model-3")
    with pytest.raises(RagCiError, match="does not know which family"):
        validate_judge(
            config(
                {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14"}, generator_model="house-model-3"
            )
        )
    assert validate_judge(unknown) == "fake"
    scorer = build_judge(unknown, env={})
    try:
        assert isinstance(scorer, FakeJudgeScorer)
        assert (scorer.fingerprint.provider, scorer.fingerprint.model) == ("fake", FAKE_MODEL)
        scorer.check_generator("house-model-3")  # no family to compare: no error
    finally:
        asyncio.run(scorer.aclose())


def test_the_fake_judge_has_one_model():
    with pytest.raises(RagCiError, match="the fake judge has one model"):
        validate_judge(config({"provider": "fake", "model": "gpt-4.1-mini-2025-04-14"}))


def test_an_unknown_prompt_fails_that_metric_not_the_run():
    chat = FakeChat()
    failure = chat.classify(UnknownPrompt("no such prompt"))
    assert failure is not None and not failure.retryable and "does not know this prompt" in failure.message
    assert chat.classify(RuntimeError("a bug")) is None  # re-raised by the client
    with pytest.raises(UnknownPrompt):
        asyncio.run(chat.complete("What is the capital of France?", None))
