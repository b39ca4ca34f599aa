"""Every provider path, end to end over HTTP against a fake server speaking its wire protocol."""

import asyncio

import pytest

from fakes.judge_cases import REFUSAL, cases, score_questions
from fakes.judge_servers import (
    SERVERS,
    FakeAnthropicJudgeServer,
    FakeAzureOpenAIJudgeServer,
    FakeBedrockJudgeServer,
    FakeGeminiJudgeServer,
    FakeOllamaJudgeServer,
    FakeOpenAIJudgeServer,
    FakeVertexJudgeServer,
)
from fakes.judge_setup import FAKE_KEYS, judge_config
from rag_ci.core.config.providers import PROVIDERS as PROVIDER_FACTS
from rag_ci.judges.build import build_judge

# Every provider that serves models (the fake serves none): tests/unit/test_provider_table.py
# checks each has a fake server speaking its wire protocol and a pinned model here.
PROVIDERS = [name for name, facts in PROVIDER_FACTS.items() if facts.takes_model]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_correct_answer_passes_and_a_wrong_answer_fails(provider, fake_judge):
    server = fake_judge(provider)
    scorer = build_judge(judge_config(provider, server), env=FAKE_KEYS)
    case = cases(1)[0]

    async def go():
        try:
            return await score_questions(
                scorer, [(case.question, case.correct, case.contexts)]
            ), await score_questions(scorer, [(case.question, case.wrong, case.contexts)])
        finally:
            await scorer.aclose()

    good, bad = (r.questions[0] for r in asyncio.run(go()))
    assert good.verdict == "pass", {n: (m.score, m.error) for n, m in good.metrics.items()}
    assert set(good.metrics) == {
        "faithfulness",
        "answer_relevancy",
        "contextual_precision",
        "contextual_recall",
        "correctness",
        "completeness",
    }
    assert bad.verdict == "fail"
    assert {n for n, m in bad.metrics.items() if m.passed is False} == {
        "faithfulness",
        "correctness",
        "completeness",
    }
    for m in good.metrics.values():
        assert m.kind == "judge" and m.error is None and m.cache_key and not m.cached
    # Scored without reasons (GEval's comes with its score); without a baseline no report prints a
    # failing verdict's reason, so none is asked (test_judge_fidelity.py: the ones a comparison prints are).
    assert {n for n, m in good.metrics.items() if m.reason} == {"correctness", "completeness"}
    assert {n for n, m in bad.metrics.items() if m.reason} == {"correctness", "completeness"}
    # 9 judge calls per answer: faithfulness 3, relevancy 2, precision 1, recall 1, GEval 1 each. The
    # wrong answer has the same contexts: its truths, precision and recall prompts are the correct
    # answer's, sent once in the run (single flight).
    assert server.requests == 9 + 9 - 3
    assert all(r.status == 200 for r in server.log)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_requests_ask_for_the_pinned_model_at_temperature_zero_with_a_json_schema(provider, fake_judge):
    server = fake_judge(provider)
    scorer = build_judge(judge_config(provider, server, metrics={"correctness": {}}), env=FAKE_KEYS)
    case = cases(1)[0]

    async def go():
        try:
            await score_questions(scorer, [(case.question, case.correct, case.contexts)])
        finally:
            await scorer.aclose()

    asyncio.run(go())
    # Checked by the wire protocol the provider speaks: the fake server it is tested against.
    _REQUEST_CHECKS[SERVERS[provider]](server.log[0], scorer.fingerprint.model)


def _openai_request(request, model):
    body = request.body
    assert body["model"] == model and body["temperature"] == 0
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert (
        schema["schema"]["required"] == ["reason", "score"]
        and schema["schema"]["additionalProperties"] is False
    )


def _anthropic_request(request, model):
    body = request.body
    assert body["model"] == model and body["temperature"] == 0
    assert body["tool_choice"] == {"type": "tool", "name": "ReasonScore"}
    assert body["tools"][0]["input_schema"]["required"] == ["reason", "score"]


def _gemini_request(request, model):
    assert request.path.endswith(f"/models/{model}:generateContent")
    config = request.body["generationConfig"]
    assert config["temperature"] == 0 and config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["reason", "score"]


def _ollama_request(request, model):
    body = request.body
    assert body["model"] == model and body["options"]["temperature"] == 0
    assert body["format"]["required"] == ["reason", "score"]


def _azure_request(request, model):
    assert request.path == "/openai/deployments/judge/chat/completions?api-version=2024-10-21"
    _openai_request(request, model)


def _bedrock_request(request, model):
    body = request.body
    assert body["modelId"] == model and body["inferenceConfig"]["temperature"] == 0
    tools = body["toolConfig"]
    assert tools["toolChoice"] == {"tool": {"name": "ReasonScore"}}
    assert tools["tools"][0]["toolSpec"]["inputSchema"]["json"]["required"] == ["reason", "score"]


def _vertex_request(request, model):
    assert request.path == (
        f"/v1beta1/projects/rag-ci-test/locations/us-central1/publishers/google/models/{model}:generateContent"
    )
    _gemini_request(request, model)


_REQUEST_CHECKS = {
    FakeAzureOpenAIJudgeServer: _azure_request,
    FakeBedrockJudgeServer: _bedrock_request,
    FakeVertexJudgeServer: _vertex_request,
    FakeOpenAIJudgeServer: _openai_request,
    FakeAnthropicJudgeServer: _anthropic_request,
    FakeGeminiJudgeServer: _gemini_request,
    FakeOllamaJudgeServer: _ollama_request,
}


def test_judge_cost_is_priced_per_metric_from_token_usage(fake_judge):
    server = fake_judge("openai")
    scorer = build_judge(
        judge_config("openai", server, prices={"input_per_mtok": 1000.0, "output_per_mtok": 0.0}),
        env=FAKE_KEYS,
    )
    case = cases(1)[0]

    async def go():
        try:
            return await score_questions(scorer, [(case.question, case.correct, case.contexts)])
        finally:
            await scorer.aclose()

    record = asyncio.run(go()).questions[0]
    # The fake bills len(prompt)//4 input tokens per call; 1000 $/Mtok = 0.001 $ per token.
    assert all(m.judge_cost_usd > 0 for m in record.metrics.values())
    assert sum(m.judge_cost_usd for m in record.metrics.values()) == pytest.approx(
        scorer.stats.cost_usd, rel=1e-6
    )
    assert scorer.stats.cost_usd == pytest.approx(scorer.stats.input_tokens * 0.001)


def test_refusal_questions_are_judged_on_correctness_not_on_relevancy_or_context(fake_judge):
    server = fake_judge("openai")
    scorer = build_judge(judge_config("openai", server), env=FAKE_KEYS)

    async def go():
        try:
            return await score_questions(
                scorer, [(REFUSAL, "I could not find this in the documents.", [])]
            ), await score_questions(scorer, [(REFUSAL, "Our CEO is Jane Smith.", [])])
        finally:
            await scorer.aclose()

    refused, invented = (r.questions[0] for r in asyncio.run(go()))
    assert set(refused.metrics) == {"faithfulness", "correctness", "completeness"}
    assert refused.metrics["correctness"].passed is True
    assert invented.metrics["correctness"].passed is False


def test_an_empty_answer_fails_the_answer_metrics_without_a_judge_call(fake_judge):
    server = fake_judge("openai")
    scorer = build_judge(
        judge_config("openai", server, metrics={"correctness": {}, "answer_relevancy": {}}), env=FAKE_KEYS
    )
    case = cases(1)[0]

    async def go():
        try:
            return await score_questions(scorer, [(case.question, "", case.contexts)])
        finally:
            await scorer.aclose()

    record = asyncio.run(go()).questions[0]
    assert {m.passed for m in record.metrics.values()} == {False}
    assert server.requests == 0
