"""Fake judge servers of the clouds: real HTTP on 127.0.0.1, each speaking its cloud's wire protocol
and checking its credentials the way the cloud does (the SDKs are never patched).

    FakeAzureOpenAIJudgeServer  POST /openai/deployments/{deployment}/chat/completions?api-version=…
                                `api-key` header or `Authorization: Bearer` (Entra ID token); replies
                                name the deployment's model version (`served_model`)
    FakeBedrockJudgeServer      POST /model/{modelId}/converse, every request's SigV4 signature
                                recomputed here from the secret key and compared (not botocore's code)
    FakeVertexJudgeServer       POST …/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent
                                and …/publishers/anthropic/models/{m}:rawPredict, with a bearer token

Faults besides the base's ("429" with Retry-After, "500", "401"...): "content_filter" (the
cloud's content filter refuses), "quota" (the cloud's quota error). Credentials the servers
accept: `ACCEPTED` (fakes.judge_setup.FAKE_KEYS holds the same); `accept(...)` changes them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from fakes.judge_servers import (
    INVALID_JSON,
    FakeAnthropicJudgeServer,
    FakeGeminiJudgeServer,
    FakeJudgeServer,
    FakeOpenAIJudgeServer,
    _Reply,
    _text_of,
    _tokens,
)

ACCEPTED = {
    "azure-key": "azure-fake-key-0123456789",
    "azure-token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.fake-entra-token",
    "aws-key-id": "AKIAFAKEJUDGE0000001",
    "aws-secret": "fake/secret+access/key0123456789abcdefgh",
    "google-token": "ya29.fake-google-access-token-0123456789",
}


class FakeAzureOpenAIJudgeServer(FakeOpenAIJudgeServer):
    """Azure OpenAI: OpenAI's bodies on Azure's paths, an `api-key` or an Entra ID bearer token."""

    path_prefix = ""  # judge.base_url is the resource's endpoint

    def __init__(
        self, *, deployment: str = "judge", served_model: str = "gpt-4.1-mini-2025-04-14", **options: Any
    ):
        super().__init__(**options)
        self.deployment, self.served_model = deployment, served_model
        self.keys = {ACCEPTED["azure-key"]}
        self.tokens = {ACCEPTED["azure-token"]}
        self.api_versions: set[str] = set()

    @staticmethod
    def presented_key(handler: BaseHTTPRequestHandler) -> str:
        return handler.headers.get("api-key") or FakeJudgeServer.presented_key(handler)

    def authenticate(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        key = handler.headers.get("api-key")
        token = (handler.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if (key is not None and key in self.keys) or (key is None and token in self.tokens):
            return
        message = (
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
            "valid key for an active subscription and use a correct regional API endpoint for your resource."
        )
        raise _Reply(401, {"error": {"code": "401", "message": message}})

    def prompt_of(self, path: str, body: dict) -> str:
        parts = urlsplit(path)
        match = re.fullmatch(r"/openai/deployments/([^/]+)/chat/completions", parts.path)
        version = dict(parse_qsl(parts.query)).get("api-version")
        if not match or match.group(1) != self.deployment:
            raise _Reply(
                404,
                {
                    "error": {
                        "code": "DeploymentNotFound",
                        "message": "The API deployment for this resource does not exist.",
                    }
                },
            )
        if not version:
            raise _Reply(404, {"error": {"code": "404", "message": "Resource not found"}})
        self.api_versions.add(version)
        return _text_of(body["messages"][-1]["content"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        payload = super().reply(body, answer, prompt)
        payload["model"] = self.served_model  # the version the deployment ran, whatever the body asked
        return payload

    def _content_filter(self) -> _Reply:
        return _Reply(
            400,
            {
                "error": {
                    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
                    "management policy.",
                    "type": None,
                    "param": "prompt",
                    "code": "content_filter",
                    "status": 400,
                    "innererror": {"code": "ResponsibleAIPolicyViolation"},
                }
            },
        )

    def _quota(self) -> _Reply:
        message = (
            "Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded token rate "
            "limit of your current pricing tier. Please retry after 1 second."
        )
        return _Reply(
            429,
            {"error": {"code": "429", "message": message}},
            {"Retry-After": self.retry_after, "retry-after-ms": str(int(float(self.retry_after) * 1000))},
        )

    provider_faults: ClassVar[dict[str, Any]] = {"content_filter": _content_filter, "quota": _quota}


# -- Amazon Bedrock ------------------------------------------------------------------------------

_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,\s*"
    r"SignedHeaders=(?P<signed>[^,]+),\s*Signature=(?P<signature>[0-9a-f]{64})"
)


def sigv4_signature(
    secret: str,
    method: str,
    raw_path: str,
    headers: dict[str, str],
    signed: list[str],
    body: bytes,
    scope: str,
) -> str:
    """AWS Signature Version 4, from its specification: the canonical request, the string to sign,
    the key derived from the secret for the scope's date, region and service."""
    path, _, query = raw_path.partition("?")
    canonical_query = "&".join(
        f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
        for k, v in sorted(parse_qsl(query, keep_blank_values=True))
    )
    canonical_headers = "".join(f"{name}:{' '.join(headers[name].split())}\n" for name in signed)
    canonical_request = "\n".join(
        [
            method,
            quote(path, safe="/~"),  # every service but S3 encodes the (already encoded) path once more
            canonical_query,
            canonical_headers,
            ";".join(signed),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    date, region, service, _ = scope.split("/")
    to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            headers["x-amz-date"],
            scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        ]
    )
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


class FakeBedrockJudgeServer(FakeAnthropicJudgeServer):
    """Bedrock's Converse API; every request's SigV4 signature is verified with the secret key."""

    def __init__(self, *, region: str = "us-east-1", **options: Any):
        super().__init__(**options)
        self.region = region
        self.secrets = {ACCEPTED["aws-key-id"]: ACCEPTED["aws-secret"]}
        self.verified = 0  # requests whose signature matched

    @staticmethod
    def presented_key(handler: BaseHTTPRequestHandler) -> str:
        match = _AUTHORIZATION.match(handler.headers.get("Authorization") or "")
        return match.group("key") if match else ""

    def authenticate(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        match = _AUTHORIZATION.match(handler.headers.get("Authorization") or "")
        if match is None:
            raise self._error(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        secret = self.secrets.get(match.group("key"))
        if secret is None:
            raise self._error(
                403, "UnrecognizedClientException", "The security token included in the request is invalid."
            )
        if match.group("region") != self.region or match.group("service") != "bedrock":
            raise self._error(
                403, "InvalidSignatureException", "Credential should be scoped to a valid region."
            )
        headers = {name.lower(): value for name, value in handler.headers.items()}
        signed = match.group("signed").split(";")
        if "host" not in signed or any(name not in headers for name in signed):
            raise self._error(403, "InvalidSignatureException", "Signed headers are missing.")
        scope = f"{match.group('date')}/{match.group('region')}/{match.group('service')}/aws4_request"
        expected = sigv4_signature(secret, handler.command, handler.path, headers, signed, raw, scope)
        if not hmac.compare_digest(expected, match.group("signature")):
            raise self._error(
                403,
                "InvalidSignatureException",
                "The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method.",
            )
        with self._lock:
            self.verified += 1

    def prompt_of(self, path: str, body: dict) -> str:
        match = re.fullmatch(r"/model/([^/]+)/converse", path)
        if not match:
            raise self._error(404, "UnknownOperationException", f"no route {path}")
        body["modelId"] = unquote(match.group(1))  # logged with the request
        return "".join(part.get("text", "") for part in body["messages"][-1]["content"])

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        tools = (body.get("toolConfig") or {}).get("tools") or []
        if answer is None or not tools:
            text = INVALID_JSON if answer is None else json.dumps(answer)
            content: list[dict] = [{"text": text}]
            stop, out = "end_turn", text
        else:
            name = tools[0]["toolSpec"]["name"]
            content = [
                {"toolUse": {"toolUseId": f"tooluse_fake_{len(self.log)}", "name": name, "input": answer}}
            ]
            stop, out = "tool_use", json.dumps(answer)
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": {
                "inputTokens": _tokens(prompt),
                "outputTokens": _tokens(out),
                "totalTokens": _tokens(prompt) + _tokens(out),
            },
            "metrics": {"latencyMs": 1},
        }

    def error_body(self, status: int, message: str) -> dict:
        return {"message": message}

    def _error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> _Reply:
        return _Reply(
            status,
            {"message": message},
            {
                "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                **(headers or {}),
            },
        )

    def _throttled(self) -> _Reply:
        return self._error(
            429,
            "ThrottlingException",
            "Too many requests, please wait before trying again.",
            {"Retry-After": self.retry_after},
        )

    def _content_filter(self) -> _Reply:
        raise _Reply(
            200,
            {
                "output": {
                    "message": {"role": "assistant", "content": [{"text": "Sorry, the model cannot answer."}]}
                },
                "stopReason": "content_filtered",
                "usage": {"inputTokens": 10, "outputTokens": 6, "totalTokens": 16},
                "metrics": {"latencyMs": 1},
            },
        )

    def _quota(self) -> _Reply:
        return self._error(
            400, "ServiceQuotaExceededException", "Your request exceeded the service quota for your account."
        )

    provider_faults: ClassVar[dict[str, Any]] = {
        "content_filter": _content_filter,
        "quota": _quota,
        "throttled": _throttled,
    }


# -- Google Vertex AI ------------------------------------------------------------------------------

_VERTEX_PATH = re.compile(
    r"(?:/v1|/v1beta1)?/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/"
    r"(?P<publisher>google|anthropic)/models/(?P<model>[^/:]+):(?P<method>generateContent|rawPredict)"
)


class FakeVertexJudgeServer(FakeGeminiJudgeServer):
    """Vertex AI: Gemini's generateContent and Claude's rawPredict (Anthropic's messages), a bearer token."""

    def __init__(self, *, project: str = "rag-ci-test", location: str = "us-central1", **options: Any):
        super().__init__(**options)
        self.project, self.location = project, location
        self.tokens = {ACCEPTED["google-token"]}
        self._claude = FakeAnthropicJudgeServer()  # its bodies, not its HTTP: never started

    def authenticate(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        token = (handler.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if token not in self.tokens:
            raise _Reply(
                401,
                {
                    "error": {
                        "code": 401,
                        "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                        "login cookie or other valid authentication credential.",
                        "status": "UNAUTHENTICATED",
                    }
                },
            )

    def _route(self, path: str) -> re.Match[str]:
        match = _VERTEX_PATH.fullmatch(urlsplit(path).path)
        if match is None or (match["publisher"] == "anthropic") != (match["method"] == "rawPredict"):
            raise _Reply(404, self.error_body(404, f"no route {path}"))
        if match["project"] != self.project or match["location"] != self.location:
            raise _Reply(
                403, self.error_body(403, f"Permission denied on resource project {match['project']}.")
            )
        return match

    def prompt_of(self, path: str, body: dict) -> str:
        if self._route(path)["publisher"] == "anthropic":
            if not body.get("anthropic_version") or "model" in body:  # the model is in the path
                raise _Reply(400, self.error_body(400, "rawPredict takes anthropic_version and no model"))
            return _text_of(body["messages"][-1]["content"])
        return super().prompt_of(path, body)

    def reply(self, body: dict, answer: dict | None, prompt: str) -> dict:
        if "anthropic_version" in body:
            return self._claude.reply(body, answer, prompt)
        return super().reply(body, answer, prompt)

    def _content_filter(self) -> _Reply:
        raise _Reply(
            200,
            {
                "promptFeedback": {"blockReason": "SAFETY"},
                "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
            },
        )

    def _quota(self) -> _Reply:
        message = (
            "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model "
            "with base model: gemini. Please submit a quota increase request."
        )
        return _Reply(429, self.error_body(429, message), {"Retry-After": self.retry_after})

    provider_faults: ClassVar[dict[str, Any]] = {"content_filter": _content_filter, "quota": _quota}


class FakeGoogleTokenJudgeServer(FakeVertexJudgeServer):
    """Vertex AI and Google's OAuth token endpoint: `POST /token` trades a service account's signed
    JWT (the application-default credentials of a key file) for an access token, as oauth2.googleapis.com
    does; the assertion's RS256 signature is verified with the account's public key."""

    def __init__(self, *, public_key: Any, account: str, **options: Any):
        super().__init__(**options)
        self.public_key, self.account = public_key, account
        self.tokens = {"ya29.fake-token-from-a-signed-jwt-0123456789"}
        self.assertions: list[dict] = []  # the claims of every verified assertion

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if urlsplit(handler.path).path != "/token":
            super()._handle(handler)
            return
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0)).decode()
        form = dict(parse_qsl(raw))
        status, payload = 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        claims = self._verified_claims(form.get("assertion", ""))
        if form.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer" and claims is not None:
            with self._lock:
                self.assertions.append(claims)
            status, payload = (
                200,
                {"access_token": next(iter(self.tokens)), "expires_in": 3599, "token_type": "Bearer"},
            )
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _verified_claims(self, assertion: str) -> dict | None:
        import base64

        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        def decode(part: str) -> bytes:
            return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

        try:
            header, claims, signature = assertion.split(".")
            self.public_key.verify(
                decode(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except (ValueError, InvalidSignature):
            return None
        decoded = json.loads(decode(claims))
        return (
            decoded
            if decoded.get("iss") == self.account and decoded.get("aud", "").endswith("/token")
            else None
        )


def service_account_file(path: Any, token_uri: str, account: str) -> Any:
    """A service account key file (an application-default credential) whose token endpoint is
    `token_uri`; returns the public key that verifies its signatures."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "rag-ci-test",
                "private_key_id": "fake-key-1",
                "private_key": pem,
                "client_email": account,
                "client_id": "1",
                "token_uri": token_uri,
            }
        )
    )
    return key.public_key()
