"""The clouds' judges (Azure OpenAI, Amazon Bedrock, Google Vertex AI) against servers speaking their
wire protocols (tests/fakes/cloud_judge_servers.py): the same verdicts as the OpenAI-compatible path,
their throttling and content-filter replies, their credentials checked by the server (Bedrock's
SigV4 signature recomputed there), and a wrong or missing credential stopping the run by name."""

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from fakes.cloud_judge_servers import ACCEPTED, FakeBedrockJudgeServer, sigv4_signature
from fakes.judge_cases import cases, score_cases, score_questions
from fakes.judge_setup import FAKE_KEYS, JUDGE_MODELS, judge_config
from rag_ci.errors import RagCiError
from rag_ci.judges.build import build_judge

FAKES = Path(__file__).resolve().parents[1] / "fakes"
CLOUDS = ["azure-openai", "bedrock", "vertex"]
ONE_CALL = {"correctness": {}}
# Each cloud's models, with the family the check follows (the model's lab, not the cloud's).
MODELS = [
    ("azure-openai", JUDGE_MODELS["azure-openai"]),
    ("bedrock", JUDGE_MODELS["bedrock"]),  # Claude: a forced tool
    ("bedrock", "meta.llama3-1-70b-instruct-v1:0"),  # Llama: JSON in text
    ("vertex", JUDGE_MODELS["vertex"]),  # Gemini: generateContent
    ("vertex", "claude-haiku-4-5@20251001"),  # Claude on Vertex: rawPredict
]
PRICED = {"prices": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}}


def verdicts(scorer, n: int = 3):
    """Each case's correct and wrong answer scored: {(case, answer): (verdict, {metric: score})}."""
    import asyncio

    items = [(c.question, a, c.contexts) for c in cases(n) for a in (c.correct, c.wrong)]

    async def go():
        try:
            return await score_questions(scorer, items)
        finally:
            await scorer.aclose()

    result = asyncio.run(go())
    return [(q.verdict, {name: m.score for name, m in q.metrics.items()}) for q in result.questions]


@pytest.mark.parametrize(("provider", "model"), MODELS)
def test_a_cloud_judge_gives_the_verdicts_of_the_openai_compatible_path(provider, model, fake_judge):
    reference = fake_judge("openai-compatible")
    expected = verdicts(build_judge(judge_config("openai-compatible", reference), env=FAKE_KEYS))
    server = fake_judge(provider, **({"served_model": model} if provider == "azure-openai" else {}))
    scorer = build_judge(judge_config(provider, server, model=model, **PRICED), env=FAKE_KEYS)
    assert verdicts(scorer) == expected
    assert {"pass", "fail"} == {v for v, _ in expected}
    assert server.requests > 0 and all(r.status == 200 for r in server.log)
    if provider == "bedrock":  # every request carried a valid SigV4 signature
        assert server.verified == server.requests
        assert {r.body["modelId"] for r in server.log} == {model}
    if provider == "vertex":
        method = ":rawPredict" if model.startswith("claude") else ":generateContent"
        assert all(r.path.endswith(f"/models/{model}{method}") for r in server.log)


@pytest.mark.parametrize(
    ("provider", "fault"), [("azure-openai", "quota"), ("bedrock", "throttled"), ("vertex", "quota")]
)
def test_a_throttled_reply_is_retried_after_its_retry_after_header(provider, fault, fake_judge):
    server = fake_judge(provider, retry_after="1")
    server.queue_faults(fault)
    scorer = build_judge(judge_config(provider, server, metrics=ONE_CALL), env=FAKE_KEYS)
    result = score_cases(scorer).questions[0].metrics["correctness"]
    assert result.passed is True and result.error is None
    first, second = server.log
    assert (first.status, second.status) == (429, 200)
    # backoff_s is 0.01 in these configs: only the header explains a one-second wait.
    assert second.at - first.at >= 0.95


def test_a_bedrock_quota_error_is_not_retried(fake_judge):
    server = fake_judge("bedrock")
    server.queue_faults("quota")
    scorer = build_judge(judge_config("bedrock", server, metrics=ONE_CALL), env=FAKE_KEYS)
    result = score_cases(scorer).questions[0].metrics["correctness"]
    assert result.passed is None and "ServiceQuotaExceededException" in result.error
    assert server.requests == 1


@pytest.mark.parametrize("provider", CLOUDS)
def test_a_content_filter_refusal_errors_the_metric_never_passes_it(provider, fake_judge):
    server = fake_judge(provider, always_fault="content_filter")
    scorer = build_judge(judge_config(provider, server, metrics=ONE_CALL), env=FAKE_KEYS)
    result = score_cases(scorer).questions[0].metrics["correctness"]
    assert result.passed is None and result.error
    if provider == "azure-openai":  # a 400 from the filter: asking again would be refused again
        assert "content management policy" in result.error and server.requests == 1
    else:  # a reply without the verdict: asked once more, like any reply that is not JSON
        assert server.requests == 2


WRONG = {
    "azure-openai": ({"AZURE_OPENAI_API_KEY": "azure-wrong-key-9876543210"}, "AZURE_OPENAI_API_KEY"),
    "bedrock": ({"AWS_SECRET_ACCESS_KEY": "wrong/secret+access/key9876543210zyxwv"}, "AWS_ACCESS_KEY_ID"),
    "vertex": (
        {"GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.wrong-google-token-9876543210"},
        "GOOGLE_OAUTH_ACCESS_TOKEN",
    ),
}


@pytest.mark.parametrize("provider", CLOUDS)
def test_a_wrong_credential_stops_the_judge_naming_the_provider_and_what_to_set(provider, fake_judge):
    server = fake_judge(provider)
    wrong, to_set = WRONG[provider]
    scorer = build_judge(judge_config(provider, server, concurrency=1), env={**FAKE_KEYS, **wrong})
    record = score_cases(scorer).questions[0]
    assert all(m.error and m.passed is None for m in record.metrics.values())
    stopped = scorer.stopped
    assert stopped is not None and f"judge provider '{provider}' refused the credentials" in stopped
    assert to_set in stopped
    assert server.requests == 1  # refused once: no call after it
    for secret in wrong.values():
        assert secret not in stopped and all(secret not in (m.error or "") for m in record.metrics.values())


def test_a_wrong_azure_key_is_exit_2_and_the_key_appears_nowhere(
    tiny_project, tmp_path, fake_judge, monkeypatch
):
    from rag_ci.cli import cli

    server = fake_judge("azure-openai", always_fault="401", quote_key="full")  # a gateway quoting the key
    key = "azure-wrong-key-" + "7" * 24
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", key)
    judge = (
        "judge:\n  provider: azure-openai\n  model: gpt-4.1-mini-2025-04-14\n"
        f"  base_url: {server.base_url}\n  deployment: judge\n  backoff_s: 0.01\n  concurrency: 1\n"
    )
    target = f"target: {{kind: python, entry: 'tiny_rag:answer', path: ['{FAKES}'], generator_family: tiny}}"
    config = tiny_project(target, None, judge)
    out = tmp_path / "out" / "results.json"
    result = CliRunner().invoke(cli, ["run", "--config", str(config), "-o", str(out), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert "judge provider 'azure-openai' refused the credentials: set AZURE_OPENAI_API_KEY" in result.output
    # The server was sent the key and quoted it back in its refusal; rag-ci repeats it nowhere.
    assert server.presented_keys == {key} and server.log[0].status == 401
    assert key not in result.output and key[:12] not in result.output
    for path in out.parent.rglob("*"):
        assert key[:12].encode() not in path.read_bytes(), path
    results = json.loads(out.read_text())
    judged = [q for q in results["questions"] if any(m["kind"] == "judge" for m in q["metrics"].values())]
    assert judged and all(
        q["verdict"] == "error" and q["error"].startswith("not evaluated: judge provider 'azure-openai'")
        for q in judged
    )


def test_an_entra_id_token_is_sent_as_a_bearer_token(fake_judge):
    server = fake_judge("azure-openai")
    env = {"AZURE_OPENAI_AD_TOKEN": ACCEPTED["azure-token"]}
    scorer = build_judge(judge_config("azure-openai", server, metrics=ONE_CALL), env=env)
    assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
    assert server.presented_keys == {ACCEPTED["azure-token"]} and server.api_versions == {"2024-10-21"}


def test_a_deployment_answering_with_another_model_than_the_pinned_one_fails_its_metrics(fake_judge):
    server = fake_judge("azure-openai", served_model="gpt-4o-2024-05-13")
    scorer = build_judge(judge_config("azure-openai", server, metrics=ONE_CALL), env=FAKE_KEYS)
    result = score_cases(scorer).questions[0].metrics["correctness"]
    assert result.passed is None
    assert (
        "answered with model 'gpt-4o-2024-05-13', not the pinned judge.model 'gpt-4.1-mini-2025-04-14'"
        in result.error
    )


@pytest.mark.parametrize(
    ("provider", "env", "message"),
    [
        ("azure-openai", {}, "judge provider 'azure-openai' has no credentials: set AZURE_OPENAI_API_KEY"),
        (
            "bedrock",
            {"AWS_ACCESS_KEY_ID": "AKIAONLYHALF"},
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together",
        ),
        ("bedrock", {}, "judge provider 'bedrock' found no AWS credentials: set AWS credentials"),
        ("vertex", {}, "judge provider 'vertex' found no Google credentials: set GOOGLE_OAUTH_ACCESS_TOKEN"),
    ],
)
def test_missing_credentials_are_refused_before_any_call(
    provider, env, message, fake_judge, tmp_path, monkeypatch
):
    # Nothing of this machine's own credentials: no AWS files or instance role, no Google ADC file.
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-adc.json"))
    server = fake_judge(provider)
    with pytest.raises(RagCiError, match=message):
        build_judge(judge_config(provider, server), env=env)
    assert server.requests == 0


@pytest.mark.parametrize(
    ("provider", "settings", "message"),
    [
        (
            "bedrock",
            {"region": None},
            r"judge provider 'bedrock' needs a region: set `judge.region` or AWS_REGION",
        ),
        (
            "vertex",
            {"project": None},
            r"judge provider 'vertex' needs a project: set `judge.project` or GOOGLE_CLOUD_PROJECT",
        ),
    ],
)
def test_a_missing_region_or_project_is_refused_naming_the_setting(provider, settings, message, fake_judge):
    server = fake_judge(provider)
    with pytest.raises(RagCiError, match=message):
        build_judge(judge_config(provider, server, **settings), env=FAKE_KEYS)


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_claude_in_a_cloud_is_of_the_anthropic_family_and_refuses_a_claude_generator(provider, fake_judge):
    model = {
        "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "vertex": "claude-haiku-4-5@20251001",
    }[provider]
    server = fake_judge(provider)
    config = judge_config(provider, server, model=model, generator_model="claude-3-5-haiku-20241022")
    with pytest.raises(RagCiError, match="both of the anthropic family"):
        build_judge(config, env=FAKE_KEYS)


def test_the_fake_bedrock_verifies_the_signature_as_aws_specifies_it():
    # AWS's published SigV4 example (GET Object, "Signature Calculations for the Authorization
    # Header"): its secret, headers and date give its signature.
    empty = hashlib.sha256(b"").hexdigest()
    headers = {
        "host": "examplebucket.s3.amazonaws.com",
        "range": "bytes=0-9",
        "x-amz-content-sha256": empty,
        "x-amz-date": "20130524T000000Z",
    }
    signature = sigv4_signature(
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "GET",
        "/test.txt",
        headers,
        ["host", "range", "x-amz-content-sha256", "x-amz-date"],
        b"",
        "20130524/us-east-1/s3/aws4_request",
    )
    assert signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"


def test_a_request_whose_body_was_changed_after_signing_is_refused(fake_judge):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    server: FakeBedrockJudgeServer = fake_judge("bedrock")
    url = f"{server.url}/model/{JUDGE_MODELS['bedrock'].replace(':', '%3A')}/converse"
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "hello"}]}]}).encode()
    request = AWSRequest("POST", url, data=body, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(ACCEPTED["aws-key-id"], ACCEPTED["aws-secret"]), "bedrock", "us-east-1").add_auth(
        request
    )
    tampered = body.replace(b"hello", b"hellO")
    headers = dict(request.headers.items())
    headers["X-Amz-Content-SHA256"] = hashlib.sha256(tampered).hexdigest()  # cannot hide it either
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(url, data=tampered, headers=headers, method="POST"))
    with refused.value as reply:
        assert reply.code == 403
        assert reply.headers["x-amzn-ErrorType"].startswith("InvalidSignatureException")
    assert server.verified == 0


@pytest.mark.parametrize("model", [JUDGE_MODELS["vertex"], "claude-haiku-4-5@20251001"])
def test_vertex_finds_application_default_credentials_and_trades_the_signed_jwt_for_a_token(
    model, tmp_path, monkeypatch
):
    from fakes.cloud_judge_servers import FakeGoogleTokenJudgeServer, service_account_file

    account = "rag-ci-judge@rag-ci-test.iam.gserviceaccount.com"
    with FakeGoogleTokenJudgeServer(public_key=None, account=account) as server:
        key_file = tmp_path / "service-account.json"
        server.public_key = service_account_file(key_file, f"{server.url}/token", account)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
        env = {k: v for k, v in FAKE_KEYS.items() if k != "GOOGLE_OAUTH_ACCESS_TOKEN"}
        scorer = build_judge(judge_config("vertex", server, model=model, metrics=ONE_CALL), env=env)
        assert score_cases(scorer).questions[0].metrics["correctness"].passed is True
        assert server.presented_keys == server.tokens  # the token the signed assertion was traded for
        assert (
            server.assertions
            and server.assertions[0]["scope"] == "https://www.googleapis.com/auth/cloud-platform"
        )


def test_a_judged_run_of_the_example_gives_each_cloud_the_verdicts_of_the_openai_compatible_path(
    tmp_path, fake_judge
):
    import shutil

    from builders import EXAMPLES
    from fakes.judge_setup import CLOUD_SETTINGS
    from rag_ci.cli import cli

    example = tmp_path / "examples"
    shutil.copytree(EXAMPLES, example, ignore=shutil.ignore_patterns(".index", "out"))
    original = (example / "rag-ci.yml").read_text()

    def judged_run(provider: str) -> dict:
        server = fake_judge(provider)
        judge = {"provider": provider, "model": JUDGE_MODELS[provider], "base_url": server.base_url}
        config = example / f"rag-ci-{provider}.yml"
        # A flow mapping (JSON is YAML) appended to the example's own configuration.
        settings = json.dumps({**judge, **CLOUD_SETTINGS.get(provider, {})})
        config.write_text(f"{original}judge: {settings}\n")
        output = tmp_path / f"{provider}.json"
        args = ["run", "--config", str(config), "--shard", "1/8", "--output", str(output), "--no-progress"]
        result = CliRunner().invoke(cli, args, env={"EXAMPLE_RAG_REGRESSION": "", **FAKE_KEYS})
        assert result.exit_code == 0, result.output
        assert server.requests > 0 and all(r.status == 200 for r in server.log)
        run = json.loads(output.read_text())
        return {
            q["id"]: (
                q["verdict"],
                {n: (m["score"], m["passed"]) for n, m in q["metrics"].items() if m["kind"] == "judge"},
            )
            for q in run["questions"]
        }

    expected = judged_run("openai-compatible")
    assert expected and all(scores for _, scores in expected.values())
    for provider in CLOUDS:
        assert judged_run(provider) == expected, provider
