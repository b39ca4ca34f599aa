#!/usr/bin/env python3
"""Pull an image's manifest by digest WITHOUT credentials, as every `uses: rag-ci/rag-ci@v1`
will: the release's check that the image the users' runners pull is public.

  pull_anonymously.py IMAGE DIGEST [--insecure-http]

IMAGE is `registry/name` (ghcr.io/owner/rag-ci), DIGEST `sha256:…`. The registry's
anonymous token flow is followed (401 + `WWW-Authenticate: Bearer realm=…` → a token asked
for with no credentials); the manifest must come back and hash to DIGEST. A refusal names the
one-time setting: a GHCR package is private after its first push and no API makes it public.
--insecure-http: plain http (tests/integration/test_release.py's fake registry only).

Standard library only. Exit 0 when pulled, 2 with one line `pull: …` on stderr otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

MANIFESTS = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class PullError(Exception):
    """The image cannot be pulled anonymously; the message says why and what to do."""


def private_package(image: str, status: int) -> PullError:
    registry, _, name = image.partition("/")
    owner, _, package = name.partition("/")
    where = (
        f"https://github.com/users/{owner}/packages/container/package/{package}/settings (or the organisation's "
        f"Packages tab) → Danger Zone → Change visibility → Public"
        if registry == "ghcr.io"
        else f"the visibility of package {name} → public"
    )
    return PullError(
        f"{image} refuses anonymous pulls (HTTP {status}): the package is private, so every `uses: …@v1` "
        f"would fail to pull it. One-time setting: {where}; then re-run this job"
    )


def _get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()
    except (urllib.error.URLError, OSError) as exc:
        raise PullError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None


def anonymous_token(challenge: str, image: str) -> str:
    """The bearer token a registry hands anyone who asks for pull access, with no credentials."""
    params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
    if not challenge.lower().startswith("bearer ") or "realm" not in params:
        raise private_package(image, 401)
    query = {"scope": params.get("scope") or f"repository:{image.partition('/')[2]}:pull"}
    if "service" in params:
        query["service"] = params["service"]
    status, _, body = _get(params["realm"] + "?" + urllib.parse.urlencode(query), {})
    if status != 200:
        raise private_package(image, status)
    try:
        payload = json.loads(body)
        return payload.get("token") or payload["access_token"]
    except (ValueError, KeyError, AttributeError):
        raise PullError(f"{params['realm']}: no token in the answer") from None


def pull_manifest(image: str, digest: str, *, scheme: str = "https") -> bytes:
    if not DIGEST.fullmatch(digest):
        raise PullError(f"not an image digest: {digest!r}")
    registry, _, name = image.partition("/")
    if not name:
        raise PullError(f"not registry/name: {image!r}")
    url = f"{scheme}://{registry}/v2/{name}/manifests/{digest}"
    headers = {"Accept": MANIFESTS}
    status, answer_headers, body = _get(url, headers)
    if status == 401:
        challenge = {k.lower(): v for k, v in answer_headers.items()}.get("www-authenticate", "")
        headers["Authorization"] = f"Bearer {anonymous_token(challenge, image)}"
        status, _, body = _get(url, headers)
    if status in (401, 403, 404):  # GHCR answers a private package's anonymous pull with 401, 403 or 404
        raise private_package(image, status)
    if status != 200:
        raise PullError(f"{url}: HTTP {status}")
    if "sha256:" + hashlib.sha256(body).hexdigest() != digest:
        raise PullError(f"{image}@{digest}: the registry served a manifest with another digest")
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pull_anonymously.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("image")
    parser.add_argument("digest")
    parser.add_argument("--insecure-http", action="store_true")
    args = parser.parse_args(argv)
    try:
        body = pull_manifest(args.image, args.digest, scheme="http" if args.insecure_http else "https")
    except PullError as exc:
        print(f"pull: {exc}", file=sys.stderr)
        return 2
    kind = json.loads(body).get("mediaType", "manifest")
    print(f"pull: {args.image}@{args.digest} pulled without credentials ({kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
