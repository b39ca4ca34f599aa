"""FakeRegistry: a fake OCI registry (distribution API v2), for tests only.

A real HTTP server on 127.0.0.1 serving one image index by digest, behind the anonymous
token flow GHCR uses: a manifest asked for without a token gets 401 and
`WWW-Authenticate: Bearer realm=…/token,service=…,scope=repository:NAME:pull`; the token
endpoint hands an anonymous token to anyone for a public package. A private package
refuses anonymous access the two ways GHCR does: no token (`refuse="token"`), or a token
the manifest then refuses (`refuse="manifest"`, 403 DENIED). Requests are recorded (path,
whether they carried a credential) so a test can check none was sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

INDEX = json.dumps(
    {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:" + "1" * 64,
                "size": 1,
                "platform": {"architecture": arch, "os": "linux"},
            }
            for arch in ("amd64", "arm64")
        ],
    }
).encode()


class FakeRegistry:
    def __init__(self, name: str, *, refuse: str | None = None) -> None:
        self.name, self.refuse = name, refuse
        self.digest = "sha256:" + hashlib.sha256(INDEX).hexdigest()
        self.requests: list[tuple[str, bool]] = []  # (path, carried a Basic credential)
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                auth = self.headers.get("Authorization", "")
                registry.requests.append((url.path, auth.lower().startswith("basic")))
                if url.path == "/token":
                    return self._token(parse_qs(url.query))
                if url.path == f"/v2/{registry.name}/manifests/{registry.digest}":
                    if auth != "Bearer anonymous-pull":
                        return self._send(
                            401,
                            b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                            {
                                "WWW-Authenticate": (
                                    f'Bearer realm="http://{self.headers["Host"]}/token",service="fake-registry",'
                                    f'scope="repository:{registry.name}:pull"'
                                )
                            },
                        )
                    if registry.refuse == "manifest":
                        return self._send(403, b'{"errors":[{"code":"DENIED"}]}')
                    return self._send(
                        200,
                        INDEX,
                        {
                            "Content-Type": "application/vnd.oci.image.index.v1+json",
                            "Docker-Content-Digest": registry.digest,
                        },
                    )
                return self._send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')

            def _token(self, query: dict) -> None:
                if registry.refuse == "token" or query.get("scope") != [f"repository:{registry.name}:pull"]:
                    return self._send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}')
                self._send(200, b'{"token": "anonymous-pull"}')

            def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeRegistry:
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()
