"""build_judge refuses, before any call, what would make verdicts untrustworthy or the run fail later."""

from dataclasses import replace

import pytest

from rag_ci.core.config import Config
from rag_ci.core.config.providers import PROVIDERS as PROVIDER_FACTS
from rag_ci.errors import RagCiError
from rag_ci.judges.build import build_judge, validate_judge
from rag_ci.judges.providers import ProviderSpec

KEYS = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-ant-x", "GOOGLE_API_KEY": "g-x"}


def config(judge: dict, **target) -> Config:
    return Config.model_validate({"target": {"kind": "python", "entry": "m:f", **target}, "judge": judge})


def test_provider_none_keeps_the_judge_free_tier_only():
    assert build_judge(config({"provider": "none"})) is None


def test_a_floating_alias_is_refused_unless_allowed():
    with pytest.raises(RagCiError, match=r"'gpt-4o' is an OpenAI alias.*judge.allow_alias: true"):
        build_judge(config({"provider": "openai", "model": "gpt-4o"}), env=KEYS)
    assert validate_judge(config({"provider": "openai", "model": "gpt-4o", "allow_alias": True})) == "openai"


def test_a_judge_of_the_generators_family_is_refused_naming_both_models():
    with pytest.raises(RagCiError) as excinfo:
        build_judge(
            config(
                {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14"},
                generator_model="gpt-4o-mini-2024-07-18",
            ),
            env=KEYS,
        )
    message = str(excinfo.value)
    assert (
        "gpt-4.1-mini-2025-04-14" in message
        and "gpt-4o-mini-2024-07-18" in message
        and "openai family" in message
    )


def test_family_overrides_are_applied_both_ways():
    same = config(
        {"provider": "openai-compatible", "model": "my-judge-v1", "family": "Qwen"},
        generator_model="house-model-3",
        generator_family="alibaba",
    )
    with pytest.raises(RagCiError, match="both of the alibaba family"):
        validate_judge(same)
    apart = config(
        {"provider": "openai-compatible", "model": "my-judge-v1", "family": "mistral"},
        generator_model="house-model-3",
        generator_family="alibaba",
    )
    assert validate_judge(apart) == "mistral"


def test_an_unknown_judge_family_asks_for_judge_family():
    with pytest.raises(RagCiError, match=r"judge model 'acme-judge-7b'.*set `judge.family`"):
        validate_judge(config({"provider": "openai-compatible", "model": "acme-judge-7b"}))


def test_an_unknown_generator_family_asks_for_target_generator_family():
    with pytest.raises(RagCiError, match=r"generator model 'house-model-3'.*`target.generator_family`"):
        validate_judge(
            config(
                {"provider": "anthropic", "model": "claude-haiku-4-5-20251001"},
                generator_model="house-model-3",
            )
        )


def test_a_missing_api_key_names_the_environment_variable():
    with pytest.raises(RagCiError, match="ANTHROPIC_API_KEY"):
        build_judge(config({"provider": "anthropic", "model": "claude-haiku-4-5-20251001"}), env={})
    with pytest.raises(RagCiError, match="MY_VLLM_KEY"):
        build_judge(
            config(
                {
                    "provider": "openai-compatible",
                    "model": "Qwen/Qwen2.5-7B-Instruct",
                    "api_key_env": "MY_VLLM_KEY",
                }
            ),
            env={},
        )


def test_a_paid_judge_without_a_known_price_asks_for_judge_prices():
    with pytest.raises(RagCiError, match=r"no price for judge model 'claude-opus-9-20300101'.*judge.prices"):
        build_judge(config({"provider": "anthropic", "model": "claude-opus-9-20300101"}), env=KEYS)


def test_a_missing_sdk_names_the_pip_extra():
    facts = replace(
        PROVIDER_FACTS["ollama"], name="acme", extra="acme", sdk_modules=("rag_ci_test_no_such_sdk",)
    )
    spec = ProviderSpec(facts, "x:y")
    with pytest.raises(RagCiError, match=r"pip install 'rag-ci-gate\[acme\]'"):
        spec.ensure_installed()


def test_a_valid_config_builds_a_scorer_with_a_fingerprint_and_no_call():
    scorer = build_judge(
        config(
            {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14", "base_url": "http://127.0.0.1:9/v1"},
            generator_model="llama3.1:8b",
        ),
        env=KEYS,
    )
    fp = scorer.fingerprint
    assert (fp.provider, fp.model, fp.temperature, fp.deepeval_version) == (
        "openai",
        "gpt-4.1-mini-2025-04-14",
        0.0,
        "4.3.1",
    )
    assert set(fp.metrics) == {
        "faithfulness",
        "answer_relevancy",
        "contextual_precision",
        "contextual_recall",
        "correctness",
        "completeness",
    }
    assert fp.metrics["correctness"]["strict"] is True and fp.metrics["correctness"]["evaluation_steps"]
    assert len(fp.prompt_hash) == 32
    assert scorer.stats.calls == 0


def test_a_cold_run_starts_importing_deepeval_at_once_and_a_cached_one_does_not():
    from rag_ci.core.results import MetricResult, QuestionResult, RunMeta, RunResult

    judge = {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14"}
    cold = build_judge(config(judge), env=KEYS)
    assert cold._prefetch is not None
    model = cold._prefetch.result(timeout=120)  # the adapter DeepEval's metrics will receive
    assert type(model).__name__ == "RagCiJudgeModel"

    verdict = MetricResult(
        name="correctness", kind="judge", score=1.0, threshold=1.0, passed=True, cache_key="v1:x"
    )
    record = QuestionResult(
        id="Q",
        question="q",
        question_hash="h",
        corpora=["a"],
        request={},
        metrics={"correctness": verdict},
        verdict="pass",
    )
    meta = RunMeta(
        rag_ci_version="t",
        started_at="2026-01-01T00:00:00",
        question_set_version=1,
        question_set_hash="qs",
        config_fingerprint="c",
        target_kind="python",
    )
    warm = build_judge(config(judge), baseline=RunResult(meta=meta, questions=[record]), env=KEYS)
    assert warm._prefetch is None  # it may be fully cached: nothing is imported until something is judged


def test_a_run_with_a_verdict_cache_starts_importing_deepeval_when_a_question_will_surely_be_judged():
    from rag_ci.core.questionset.questions import Question
    from rag_ci.core.results import MetricResult, QuestionResult, RunMeta, RunResult

    judge = {"provider": "openai", "model": "gpt-4.1-mini-2025-04-14"}
    known = Question(id="Q", question="q?", reference="r.")
    names = (
        "faithfulness",
        "answer_relevancy",
        "contextual_precision",
        "contextual_recall",
        "correctness",
        "completeness",
    )
    verdicts = {
        n: MetricResult(name=n, kind="judge", score=1.0, threshold=0.5, passed=True, cache_key=f"v1:{n}")
        for n in names
    }
    record = QuestionResult(
        id="Q",
        question="q?",
        question_hash=known.content_hash,
        corpora=["a"],
        request={},
        metrics=verdicts,
        verdict="pass",
    )
    meta = RunMeta(
        rag_ci_version="t",
        started_at="2026-01-01T00:00:00",
        question_set_version=1,
        question_set_hash="qs",
        config_fingerprint="c",
        target_kind="python",
    )
    baseline = RunResult(meta=meta, questions=[record])

    same = build_judge(config(judge), baseline=baseline, env=KEYS)
    same.expect([known], baseline.by_id())
    assert same._prefetch is None  # every verdict may come from the cache: nothing imported yet

    for asked in (
        [known, Question(id="NEW", question="new?", reference="r.")],  # a new question
        [Question(id="Q", question="q, edited?", reference="r.")],
    ):  # an edited one
        scorer = build_judge(config(judge), baseline=baseline, env=KEYS)
        scorer.expect(asked, baseline.by_id())
        assert scorer._prefetch is not None
        assert type(scorer._prefetch.result(timeout=120)).__name__ == "RagCiJudgeModel"
        assert scorer.client._provider is not None  # the SDK client was built in that thread, not on the loop


def test_the_sdk_client_is_built_once_when_the_import_thread_and_the_event_loop_both_ask_for_it():
    # The DeepEval import thread warms the client up while the event loop may already
    # call (the equivalence check); a second build left an SDK client, with its open
    # connections, that aclose never closed.
    import threading
    import time

    from rag_ci.judges.client import JudgeClient
    from rag_ci.judges.prices import Price
    from rag_ci.judges.retry import RetryPolicy

    built = []

    def slow_sdk_client():
        time.sleep(0.2)  # building the SDK client loads its CA bundle and transport modules
        built.append(object())
        return built[-1]

    client = JudgeClient(slow_sdk_client, policy=RetryPolicy(), concurrency=1, price=Price(0, 0))
    warming = threading.Thread(target=client.warm_up)
    warming.start()
    time.sleep(0.05)
    used = client.provider
    warming.join()
    assert len(built) == 1 and client.provider is used
